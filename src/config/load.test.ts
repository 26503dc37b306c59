import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ConfigError } from '../core/errors.js';
import { loadConfig } from './load.js';

const dir = mkdtempSync(join(tmpdir(), 'sagaway-load-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
};

const minimalSaga = {
  id: 's',
  path: '/s',
  steps: [
    { id: 'start', type: 'start', links: [{ to: 'ok' }] },
    { id: 'ok', type: 'success' },
  ],
};

test('JSON files load like YAML; settings are compiled, defaulted and frozen', async () => {
  const f = file(
    'c.json',
    JSON.stringify({
      gateway: { limits: { timeout: '2s', bodyLimit: '64kb' } },
      states: { db: { type: 'sqlite', file: 'data/x.db' } },
      runners: { r: { sagas: [minimalSaga] } },
    }),
  );
  const { settings } = await loadConfig(f);
  assert.equal(settings.gateway.limits.timeoutMs, 2000);
  assert.equal(settings.gateway.limits.bodyLimit, 65536);
  assert.equal(settings.gateway.stream.heartbeatMs, 15000);
  assert.equal(
    settings.states['db']?.type === 'sqlite' && settings.states['db'].file,
    join(dir, 'data', 'x.db'),
    'relative to the config file',
  );
  assert.equal(settings.runners['r']?.deployment, '1');
  assert.ok(
    Object.isFrozen(settings) &&
      Object.isFrozen(settings.gateway.stream) &&
      Object.isFrozen(settings.runners['r']?.sagas[0]),
  );
  assert.throws(() => {
    (settings.gateway as { host: string }).host = 'x';
  }, TypeError);
});

test('${env:...}: values, defaults, type coercion, and nothing evaluated', async () => {
  const f = file(
    'env.yaml',
    [
      'gateway: { port: ${env:T_PORT:-8181}, host: "${env:T_HOST}" }',
      'values: { A: "pre-${env:T_HOST}-post", B: "${env:T_UNSET:-}", C: "$(whoami) `id` ${{X}}" }',
      'runners: { r: { sagas: [] } }',
    ].join('\n'),
  );
  const { settings } = await loadConfig(f, { env: { T_HOST: '127.0.0.9' } });
  assert.equal(settings.gateway.port, 8181);
  assert.equal(settings.gateway.host, '127.0.0.9');
  assert.deepEqual(settings.values, { A: 'pre-127.0.0.9-post', B: '', C: '$(whoami) `id` ${{X}}' });
  const { settings: s2 } = await loadConfig(f, { env: { T_HOST: 'h', T_PORT: '9000' } });
  assert.equal(s2.gateway.port, 9000);
});

test('an environment value cannot add YAML structure', async () => {
  const f = file('inject.yaml', 'values: { A: ${env:T_EVIL} }\nrunners: { r: { sagas: [] } }\n');
  const { settings } = await loadConfig(f, { env: { T_EVIL: 'x\nrunners: { evil: {} }' } });
  assert.equal(settings.values['A'], 'x\nrunners: { evil: {} }');
  assert.deepEqual(Object.keys(settings.runners), ['r']);
});

test('every error is reported at once, located', async () => {
  const f = file('many.yaml', 'gateway:\n  port: -1\n  nope: 1\nruntimes: {}\n');
  await assert.rejects(loadConfig(f), (e: unknown) => {
    assert.ok(e instanceof ConfigError);
    const lines = e.issues.map((i) => `${i.line}:${i.col} ${i.path}: ${i.message}`);
    assert.deepEqual(
      lines.sort(),
      ['2:9 gateway.port: must be >= 0', '3:3 gateway.nope: unknown property', '4:1 runtimes: unknown property'].sort(),
    );
    return true;
  });
});
