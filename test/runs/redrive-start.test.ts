import { test } from 'node:test';
import assert from 'node:assert/strict';
import { config, handled, post, statusWhen, world } from './runs-world.js';

/**
 * A redrive with `fromStep: start` (docs/runs.md): the saga runs again from its start, so a step
 * that had succeeded runs again under a new idempotency key (`<runId>:<stepId>#2`), as for any
 * `fromStep` earlier than the failed step; and `start` names the start step whatever its id.
 */

const SQLITE = 'jr: { type: sqlite, file: ./journal.db }';

test('redrive from start: a step that had succeeded runs again under a new key', async (t) => {
  const w = await world(config(SQLITE));
  t.after(() => w.close());
  const h = handled();
  const first = await post(w, '/api/request/orders', { order: 'o-1' });
  assert.equal(first.status, 503);
  h.fixed = true;
  const res = await post(w, `/api/runs/${first.id}/redrive`, { fromStep: 'start', reason: 'again' });
  assert.equal(res.status, 202, JSON.stringify(res.body));
  const done = await statusWhen(w, first.id, (s) => s.status === 'DONE');
  assert.equal(done.outcome, 'SUCCESS');
  assert.deepEqual(
    h.calls.map((c) => c.name),
    ['Reserve', 'Flaky', 'Reserve', 'Flaky', 'Last'],
  );
  assert.equal(h.calls[2]!.key, `${first.id}:one#2`, 'Reserve had succeeded: it really runs again');
});

test('redrive fromStep "start" names the start step whatever its id', async (t) => {
  const w = await world(config(SQLITE).replace('{ id: start, type: start', '{ id: begin, type: start'));
  t.after(() => w.close());
  const first = await post(w, '/api/request/orders', { order: 'o-1' });
  assert.equal(first.status, 503);
  const dry = await post(w, `/api/runs/${first.id}/redrive`, { fromStep: 'start', dryRun: true });
  assert.equal(dry.status, 200, JSON.stringify(dry.body));
  assert.equal(dry.body['fromStep'], 'begin');
});
