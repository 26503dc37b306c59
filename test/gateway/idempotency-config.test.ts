import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { loadConfig } from '../../src/config/load.js';

/** gateway.idempotency and gateway.openapi as a configuration file gives them. */

const dir = mkdtempSync(join(tmpdir(), 'sagaway-idem-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function load(gateway: string) {
  const file = join(dir, `c${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, `gateway:\n${gateway}\nstates:\n  keys: { type: memory }\nrunners: { r: { sagas: [] } }\n`);
  return loadConfig(file);
}

test('defaults: 24h, 256kb, no state; openapi on', async () => {
  const { settings } = await load('  port: 8080');
  assert.deepEqual(settings.gateway.idempotency, { ttlMs: 86_400_000, maxBody: 262_144, maxKeysPerCaller: 1000 });
  // on, with the defaults: no servers of its own, no license (no package.json above the temporary folder)
  assert.deepEqual(settings.gateway.openapi, {});
});

test('durations, sizes and the state are compiled; openapi can be turned off', async () => {
  const { settings } = await load(
    '  idempotency: { ttl: 1h, maxBody: 1kb, state: keys, maxKeysPerCaller: 50 }\n  openapi: false',
  );
  assert.deepEqual(settings.gateway.idempotency, {
    ttlMs: 3_600_000,
    state: 'keys',
    maxBody: 1024,
    maxKeysPerCaller: 50,
  });
  assert.equal(settings.gateway.openapi, false);
});

test('an unknown state and an unknown key are located errors', async () => {
  await assert.rejects(load('  idempotency: { state: nope }'), (err: Error) => {
    assert.match(err.message, /gateway\.idempotency\.state: unknown state "nope"/);
    return true;
  });
  await assert.rejects(load('  idempotency: { tll: 1h }'), /gateway\.idempotency/);
});
