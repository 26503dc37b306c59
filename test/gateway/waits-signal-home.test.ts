import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { silentLogger } from '../../src/core/logger.js';
import { createGateway } from '../../src/gateway/server.js';
import { startTestHost, testClock } from '../../src/testing/index.js';
import { sagaway } from '../cli/spawn.js';

/**
 * Kept correlation signals live in the store of the journal whose runners wait on that signal
 * by key (issue 21): a signal sent before the wait exists is found by a wait of a runner whose
 * journal is not the first of the file; and a file whose keyed waits on one name are in runners
 * of two journals is refused at load, located at the wait.
 */

const KEY = 'key-bank-0123456789';
const sha = (k: string) => createHash('sha256').update(k).digest('hex');

const runner = (name: string, journal: string, signal: string, path: string) => `
  ${name}:
    journal: ${journal}
    sagas:
      - id: ${name}-saga
        path: ${path}
        methods: [POST]
        steps:
          - { id: start, type: start, links: [{ to: w }] }
          - { id: w, type: wait, signal: { name: ${signal}, key: parameters.order }, timeout: 1h, outputElement: $.paid, links: [{ to: ok, when: [SIGNAL] }] }
          - { id: ok, type: success }
`;

const config = (second: { journal: string; signal: string }) => `
gateway:
  apis:
    - { path: /a, runner: first, methods: [POST], public: true }
    - { path: /b, runner: second, methods: [POST], public: true }
  auth:
    apiKeys: [{ name: bank, sha256: "${sha(KEY)}", roles: [] }]
states:
  j1: { type: sqlite, file: ./j1.db }
  j2: { type: sqlite, file: ./j2.db }
runners:${runner('first', 'j1', 'refund', '/a')}${runner('second', second.journal, second.signal, '/b')}`;

test('a signal kept before the wait exists is consumed by a wait whose journal is not the first store', async () => {
  const host = await startTestHost(config({ journal: 'j2', signal: 'payment' }), { clock: testClock() });
  const gateway = await createGateway({
    settings: host.settings,
    service: host.host,
    log: silentLogger(),
    status: host.host.statusReader(),
    waits: host.host.waits.signals(),
  });
  try {
    const sent = await gateway.app.inject({
      method: 'POST',
      url: '/api/signals/payment',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      payload: JSON.stringify({ key: 'o-1', data: { amount: 5 }, messageId: 'm-1', ttl: '1h' }),
    });
    assert.equal(sent.statusCode, 202, sent.body);
    assert.equal(sent.json().status, 'KEPT');
    assert.equal((await host.host.waits.stats()).kept, 1);
    // the run of `second` (journal j2) parks, finds the kept signal in its own store, and goes on
    const parked = await host.run('/b', { method: 'POST', input: { order: 'o-1' }, runner: 'second' });
    assert.equal(parked.outcome, 'WAITING');
    const runId = (parked.response as { runId: string }).runId;
    const { ended } = await host.advance(0);
    const end = ended.get(runId) ?? (await host.status(runId));
    assert.equal((end as { outcome?: string }).outcome, 'SUCCESS', JSON.stringify(end));
    // the same messageId again is a duplicate, applied
    const again = await gateway.app.inject({
      method: 'POST',
      url: '/api/signals/payment',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      payload: JSON.stringify({ key: 'o-1', data: { amount: 5 }, messageId: 'm-1', ttl: '1h' }),
    });
    assert.deepEqual([again.statusCode, again.json().duplicate, again.json().status], [200, true, 'APPLIED']);
  } finally {
    await gateway.close();
    await host.close();
  }
});

test('keyed waits on one signal name in runners of two journals: a located load error', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sagaway-signal-home-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'sagaway.yaml');
  writeFileSync(file, config({ journal: 'j2', signal: 'refund' }));
  const r = sagaway(['validate', '--config', file]);
  assert.equal(r.status, 1, r.stdout);
  assert.match(
    r.stdout + r.stderr,
    /sagaway\.yaml:\d+:\d+ runners\.second\.sagas\[0\]\.steps\[1\]\.signal\.name: signal "refund" is waited on by key in runners of two journals \(runner first: j1, runner second: j2\)/,
  );
  // one journal for both: fine
  writeFileSync(file, config({ journal: 'j1', signal: 'refund' }));
  assert.equal(sagaway(['validate', '--config', file]).status, 0);
});
