import { test } from 'node:test';
import assert from 'node:assert/strict';
import { redriveFromTheFailedStep } from './redrive-flow.js';
import { config, handled, post, statusWhen, world } from './runs-world.js';

/** Redrive on a SQLite journal (issue 22): from the failed step, with a new input, and past retention. */

const SQLITE = 'jr: { type: sqlite, file: ./journal.db }';

test('redrive from the failed step after fixing the cause: only the rest runs, same run id (SQLite)', async () => {
  await redriveFromTheFailedStep(config(SQLITE));
});

test('redrive from an earlier step with a new input: that step runs again, under a new key', async (t) => {
  const w = await world(config(SQLITE));
  t.after(() => w.close());
  const h = handled();
  const first = await post(w, '/api/request/orders', { order: 'o-1' });
  assert.equal(first.status, 503);
  h.fixed = true;
  const dry = await post(w, `/api/runs/${first.id}/redrive`, { fromStep: 'one', dryRun: true });
  assert.deepEqual(dry.body['notIdempotent'], ['two']);
  const res = await post(w, `/api/runs/${first.id}/redrive`, {
    fromStep: 'one',
    input: { order: 'o-2' },
    reason: 'typo in the order',
  });
  assert.equal(res.status, 202);
  const done = await statusWhen(w, first.id, (s) => s.status === 'DONE');
  assert.equal(done.outcome, 'SUCCESS');
  assert.deepEqual((done.response as Record<string, unknown>)['one'], { held: 'o-2' });
  assert.deepEqual(
    h.calls.map((c) => [c.name, c.order]),
    [
      ['Reserve', 'o-1'],
      ['Flaky', 'o-1'],
      ['Reserve', 'o-2'],
      ['Flaky', 'o-2'],
      ['Last', 'o-2'],
    ],
  );
  assert.notEqual(h.calls[2]!.key, h.calls[0]!.key, 'a step that had succeeded runs again under a new key');
});

test('a run past its journalRetention is HISTORY_EXPIRED', async (t) => {
  const w = await world(config(SQLITE, { runner: 'journalRetention: 1s' }));
  t.after(() => w.close());
  const first = await post(w, '/api/request/orders', { order: 'o-1' });
  assert.equal(first.status, 503);
  const dry = await post(w, `/api/runs/${first.id}/redrive`, { dryRun: true });
  assert.equal(dry.status, 200, 'within retention');
  await new Promise((r) => setTimeout(r, 1200));
  const late = await post(w, `/api/runs/${first.id}/redrive`, { reason: 'too late' });
  assert.equal(late.status, 410);
  assert.equal(late.body['code'], 'HISTORY_EXPIRED');
});

test('a failed run whose compensations ran is not redrivable', async (t) => {
  // the last step fails after `one` (compensated) succeeded: the run unwinds
  const w = await world(config(SQLITE, { compensate: true }));
  t.after(() => w.close());
  const first = await post(w, '/api/request/orders', { order: 'o-1' });
  assert.equal(first.status, 503);
  assert.ok(
    handled().calls.some((c) => c.name === 'Release'),
    'the compensation ran',
  );
  const res = await post(w, `/api/runs/${first.id}/redrive`, { reason: 'x' });
  assert.equal(res.status, 409);
  assert.equal(res.body['code'], 'RUN_NOT_REDRIVABLE');
});
