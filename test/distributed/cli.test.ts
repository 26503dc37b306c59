import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

/** Usage errors of `sagaway gateway` and `sagaway runner` (no services needed). */

const CLI = join('dist', 'src', 'cli', 'main.js');
const dir = mkdtempSync(join(tmpdir(), 'sagaway-cli-dist-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function sagaway(...args: string[]) {
  return spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 20_000 });
}

const embedded = join(dir, 'embedded.yaml');
writeFileSync(embedded, 'runners:\n  r:\n    sagas: []\n');
const distributed = join(dir, 'distributed.yaml');
writeFileSync(
  distributed,
  'systems:\n  bus: { type: nats, servers: ["nats://127.0.0.1:1"] }\ndefaultSystem: bus\nrunners:\n  r:\n    sagas: []\n',
);

test('gateway and runner need a nats system; the runner needs --runner naming one of the file', () => {
  const g = sagaway('gateway', '--config', embedded);
  assert.equal(g.status, 2);
  assert.match(g.stderr, /CONFIG_INVALID: the gateway alone needs a nats system/);
  const r = sagaway('runner', '--config', embedded, '--runner', 'r');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /needs a nats system/);
  const missing = sagaway('runner', '--config', distributed);
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /needs --runner NAME/);
  const unknown = sagaway('runner', '--config', distributed, '--runner', 'nope');
  assert.equal(unknown.status, 2);
  assert.match(unknown.stderr, /no runner "nope"/);
  const bad = sagaway('runner', '--config', distributed, '--runner', 'r', '--deployment', 'a b');
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /invalid deployment id/);
});

test('the usage text lists gateway and runner', () => {
  const h = sagaway('--help');
  assert.match(h.stdout, /sagaway gateway {2}--config FILE \[--port N\]/);
  assert.match(h.stdout, /sagaway runner {3}--config FILE --runner NAME \[--deployment ID\] \[--port N\]/);
});
