import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config/load.js';
import { config, handled, post, status, statusWhen, world, type World } from './runs-world.js';

/**
 * Hold instead of fail (issue 22 item 3): `retry: { attempts, onExhausted: suspend }` parks a run
 * whose tries ran out as SUSPENDED, its compensation not run; `/metrics` counts it; a redrive
 * finishes it (no compensation ever runs), an abort runs the compensations and ends it FAIL
 * RUN_ABORTED. Real sockets, a SQLite journal.
 */

const SQLITE = 'jr: { type: sqlite, file: ./journal.db }';
const SUSPENDING = config(SQLITE, {
  compensate: true,
  retry: 'retry: { attempts: 2, backoff: 5ms, jitter: false, on: [FLAKY], onExhausted: suspend }',
});

async function suspended(w: World): Promise<string> {
  const res = await fetch(`${w.base}/api/request/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ order: 'o-1' }),
  });
  assert.equal(res.status, 202);
  const runId = res.headers.get('x-request-id')!;
  assert.equal(res.headers.get('location'), `/api/status/${runId}`);
  const body = (await res.json()) as Record<string, unknown>;
  assert.equal(body['status'], 'SUSPENDED');
  assert.equal(body['step'], 'two');
  return runId;
}

async function suspendedGauge(w: World): Promise<number> {
  const text = await (await fetch(`${w.base}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('sagaway_runs_suspended '));
  assert.ok(line, 'the gauge is exported');
  return Number(line.split(' ')[1]);
}

test('a suspended run is held without compensation, counted, then redriven to its end', async (t) => {
  const w = await world(SUSPENDING);
  t.after(() => w.close());
  const h = handled();
  const runId = await suspended(w);
  assert.deepEqual(
    h.calls.map((c) => c.name),
    ['Reserve', 'Flaky', 'Flaky'],
    'two tries, and no compensation',
  );
  const s = await status(w, runId);
  assert.equal(s.status, 'SUSPENDED');
  assert.equal(s.outcome, undefined);
  const listed = (await (await fetch(`${w.base}/api/runs?status=SUSPENDED`)).json()) as {
    runs: Record<string, unknown>[];
  };
  assert.deepEqual(
    listed.runs.map((r) => [r['runId'], r['failedStep'], r['errorCode']]),
    [[runId, 'two', 'FLAKY']],
  );
  assert.equal(await suspendedGauge(w), 1);
  // an abort needs a reason; a redrive of a suspended run goes on from its step
  assert.equal((await post(w, `/api/runs/${runId}/abort`, {})).body['code'], 'VALIDATION_FAILED');
  const dry = await post(w, `/api/runs/${runId}/redrive`, { dryRun: true });
  assert.equal(dry.body['fromStep'], 'two');

  h.fixed = true;
  const res = await post(w, `/api/runs/${runId}/redrive`, { reason: 'the payment service is back' });
  assert.equal(res.status, 202);
  const done = await statusWhen(w, runId, (x) => x.status === 'DONE');
  assert.equal(done.outcome, 'SUCCESS');
  assert.equal(done.redriveCount, 1);
  assert.equal(done.attempts?.[0]?.outcome, 'SUSPENDED');
  assert.equal(done.attempts?.[0]?.step, 'two');
  assert.deepEqual(
    h.calls.map((c) => c.name),
    ['Reserve', 'Flaky', 'Flaky', 'Flaky', 'Last'],
  );
  assert.equal(new Set(h.calls.filter((c) => c.name === 'Flaky').map((c) => c.key)).size, 1, 'one key for the step');
  assert.equal(await suspendedGauge(w), 0);
  // abort is for suspended runs only
  const late = await post(w, `/api/runs/${runId}/abort`, { reason: 'x' });
  assert.equal(late.status, 409);
  assert.equal(late.body['code'], 'RUN_NOT_SUSPENDED');
});

test('an aborted suspended run runs its compensations and ends FAIL RUN_ABORTED', async (t) => {
  const w = await world(SUSPENDING);
  t.after(() => w.close());
  const h = handled();
  const runId = await suspended(w);
  const res = await post(w, `/api/runs/${runId}/abort`, { reason: 'the customer cancelled' });
  assert.equal(res.status, 202);
  assert.equal(res.body['compensations'], 1);
  const done = await statusWhen(w, runId, (x) => x.status === 'DONE');
  assert.equal(done.outcome, 'FAIL');
  assert.equal(done.error?.code, 'RUN_ABORTED');
  assert.match(done.error?.message ?? '', /the customer cancelled/);
  assert.deepEqual(
    h.calls.map((c) => c.name),
    ['Reserve', 'Flaky', 'Flaky', 'Release'],
    'the compensation ran, once',
  );
  // and the aborted run is over: not redrivable (its compensations ran), not abortable again
  assert.equal((await post(w, `/api/runs/${runId}/redrive`, { reason: 'x' })).body['code'], 'RUN_NOT_REDRIVABLE');
  assert.equal((await post(w, `/api/runs/${runId}/abort`, { reason: 'x' })).body['code'], 'RUN_NOT_SUSPENDED');
  assert.equal(await suspendedGauge(w), 0);
});

test('onExhausted: schema and checks', async (t) => {
  const { mkdtemp, writeFile, rm } = await import('node:fs/promises');
  const { join } = await import('node:path');
  const { tmpdir } = await import('node:os');
  const dir = await mkdtemp(join(tmpdir(), 'onexhausted-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'h.mjs'), 'export default { name: "h", actions: {} };');
  const load = async (text: string) => {
    await writeFile(join(dir, 'sagaway.yaml'), text);
    return loadConfig(join(dir, 'sagaway.yaml'));
  };
  await assert.rejects(load(config(SQLITE, { retry: 'retry: { attempts: 2, onExhausted: hold }' })), /onExhausted/);
  const onUndo = config(SQLITE, { compensate: true }).replace(
    'compensate: { eventMeta: { handler: h, action: Release, version: 0 } }',
    'compensate: { eventMeta: { handler: h, action: Release, version: 0 }, retry: { attempts: 2, onExhausted: suspend } }',
  );
  await assert.rejects(load(onUndo), /onExhausted: suspend is for the step's own retry/);
  const ok = await load(SUSPENDING);
  assert.ok(ok.settings.runners['r']);
});
