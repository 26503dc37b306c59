import { test } from 'node:test';
import assert from 'node:assert/strict';
import { handled, post, statusWhen, world } from './runs-world.js';

/**
 * An operator aborts a WAITING run (issue 22): `POST /api/runs/<runId>/abort` on a run parked on
 * a wait step cancels it through its wait, whoever started it (the wait's own cancel route is for
 * the run's caller and the wait's roles): it ends FAIL RUN_CANCELLED after its compensations.
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
    sagas:
      - id: order
        path: /orders
        methods: [POST]
        steps:
          - { id: start, type: start, links: [{ to: one }] }
          - id: one
            type: event
            eventMeta: { handler: h, action: Reserve, version: 0, outputElement: $.one }
            compensate: { eventMeta: { handler: h, action: Release, version: 0 } }
            links: [{ to: hold }]
          - { id: hold, type: wait, signal: { name: go }, timeout: 1h, links: [{ to: done, when: [SIGNAL] }] }
          - { id: done, type: success }
`;

test('an operator aborts a waiting run: its wait is cancelled, its compensation runs', async (t) => {
  const w = await world(CONFIG);
  t.after(() => w.close());
  const started = await post(w, '/api/request/orders', { order: 'o-1' });
  assert.equal(started.status, 202);
  const runId = started.id;
  // the wait's own cancel is for the run's caller or the wait's roles: an anonymous one is refused
  assert.equal((await post(w, `/api/runs/${runId}/cancel`)).status, 401);
  const res = await post(w, `/api/runs/${runId}/abort`, { reason: 'stuck order' });
  assert.equal(res.status, 202, JSON.stringify(res.body));
  assert.equal((res.body['cancelled'] as { status: string }).status, 'CANCELLED');
  const done = await statusWhen(w, runId, (s) => s.status === 'DONE');
  assert.equal(done.outcome, 'FAIL');
  assert.equal(done.error?.code, 'RUN_CANCELLED');
  assert.deepEqual(
    handled().calls.map((c) => c.name),
    ['Reserve', 'Release'],
  );
});
