import { test } from 'node:test';
import assert from 'node:assert/strict';
import { handled, post, statusWhen, world } from './runs-world.js';

/**
 * A run that failed because its wait timed out (WAIT_TIMEOUT) and was redriven from the failed
 * step (the wait): the redrive goes on from that step (docs/runs.md), so the run waits again; it
 * must not replay the old timeout and fail at once.
 */

const CONFIG = `
gateway:
  apis:
    - { path: /orders, runner: r, public: true }
states:
  jr: { type: sqlite, file: ./journal.db }
runners:
  r:
    handlers: [./h.mjs]
    journal: jr
    waitPoll: 100ms
    resumeInterval: 200ms
    sagas:
      - id: order
        path: /orders
        methods: [POST]
        steps:
          - { id: start, type: start, links: [{ to: hold }] }
          - { id: hold, type: wait, signal: { name: go }, timeout: 1s, links: [{ to: done, when: [SIGNAL] }] }
          - { id: done, type: success }
`;

test('a run whose wait timed out, redriven from the failed step, waits again', async (t) => {
  const w = await world(CONFIG);
  t.after(() => w.close());
  const started = await post(w, '/api/request/orders', { order: 'o-1' });
  assert.equal(started.status, 202);
  const runId = started.id;
  const failed = await statusWhen(w, runId, (s) => s.status === 'DONE');
  assert.equal(failed.outcome, 'FAIL');
  const res = await post(w, `/api/runs/${runId}/redrive`, { reason: 'the approver is back' });
  assert.equal(res.status, 202, JSON.stringify(res.body));
  assert.equal(res.body['fromStep'], 'hold');
  const again = await statusWhen(w, runId, (s) => s.status !== 'RUNNING');
  assert.equal(again.status, 'WAITING', JSON.stringify(again));
  // a waiting run is not redriven: the refusal names the operator's route, abort (cancel is the caller's)
  const refused = await post(w, `/api/runs/${runId}/redrive`, { reason: 'twice' });
  assert.equal(refused.body['code'], 'RUN_NOT_REDRIVABLE');
  assert.match(String(refused.body['detail']), /\/abort\b/);
  // a new wait: its signal now ends the run
  const signal = await post(w, `/api/runs/${runId}/signals/go`, {});
  assert.equal(signal.status, 202, JSON.stringify(signal.body));
  const done = await statusWhen(w, runId, (s) => s.status === 'DONE');
  assert.equal(done.outcome, 'SUCCESS', JSON.stringify(done));
});

test('a run whose step after a signalled wait failed, redriven, keeps the signal: no new wait', async (t) => {
  const cfg = CONFIG.replace(
    'links: [{ to: done, when: [SIGNAL] }] }',
    'links: [{ to: two, when: [SIGNAL] }] }\n          - { id: two, type: event, eventMeta: { handler: h, action: Flaky, version: 0 }, links: [{ to: done }] }',
  );
  const w = await world(cfg);
  t.after(() => w.close());
  const started = await post(w, '/api/request/orders', { order: 'o-1' });
  assert.equal(started.status, 202);
  const runId = started.id;
  assert.equal((await post(w, `/api/runs/${runId}/signals/go`, {})).status, 202);
  const failed = await statusWhen(w, runId, (s) => s.status === 'DONE');
  assert.equal(failed.error?.step, 'two');
  handled().fixed = true;
  const res = await post(w, `/api/runs/${runId}/redrive`, { reason: 'payments fixed' });
  assert.equal(res.status, 202, JSON.stringify(res.body));
  const done = await statusWhen(w, runId, (s) => s.status === 'DONE');
  assert.equal(done.outcome, 'SUCCESS', JSON.stringify(done));
});
