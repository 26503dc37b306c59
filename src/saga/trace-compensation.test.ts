import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SagaDefinition } from '../config/settings.js';
import { silentLogger } from '../core/logger.js';
import type { EventMessage, EventReply } from '../core/messages.js';
import { TraceBus, type RunRecord } from '../core/trace.js';
import { runSaga, type EngineDeps } from './engine.js';
import { compileSaga } from '../testing/compile-saga.js';
import type { RawStep } from './schema.js';

/**
 * Issue 24 item 3: a traced run shows its compensations (each undo with its status, time and key,
 * and the run's `compensation`) and every try of a retried step or undo.
 */

const retry = { attempts: 3, backoff: '1ms', maxBackoff: '1ms', on: ['FAIL'] };

const steps: RawStep[] = [
  { id: 'start', type: 'start', links: [{ to: 'reserve' }] },
  {
    id: 'reserve',
    type: 'event',
    eventMeta: { handler: 'inv', action: 'Reserve', version: 0, outputElement: '$.r' },
    compensate: { eventMeta: { handler: 'inv', action: 'Release', version: 0 } },
    links: [{ to: 'charge', when: ['SUCCESS'] }],
  },
  {
    id: 'charge',
    type: 'event',
    retry,
    eventMeta: { handler: 'pay', action: 'Charge', version: 0, outputElement: '$.c' },
    compensate: { eventMeta: { handler: 'pay', action: 'Refund', version: 0 }, retry },
    links: [{ to: 'ship', when: ['SUCCESS'] }],
  },
  {
    id: 'ship',
    type: 'event',
    eventMeta: { handler: 'ship', action: 'Ship', version: 0 },
    links: [{ to: 'done', when: ['SUCCESS'] }],
  },
  { id: 'done', type: 'success' },
] as RawStep[];

const saga = compileSaga(
  { id: 'order', path: '/order', source: { file: 'inline', at: [] }, steps } as SagaDefinition,
  5000,
);

/** Charge fails once then succeeds; Refund always fails; Ship fails. */
function deps(): EngineDeps {
  const tries = new Map<string, number>();
  return {
    log: silentLogger(),
    maxSteps: 100,
    dispatch: (event: EventMessage): Promise<EventReply> => {
      const n = (tries.get(event.stepId) ?? 0) + 1;
      tries.set(event.stepId, n);
      const fail = event.stepId === 'ship' || event.stepId === 'charge:undo' || (event.stepId === 'charge' && n === 1);
      return Promise.resolve(
        fail
          ? {
              status: 'FAIL',
              error: { code: 'ACTION_FAILED', message: `${event.stepId} said no` },
              inputElement: null,
              outputElement: null,
            }
          : { status: 'SUCCESS', output: { ok: true }, inputElement: null, outputElement: null },
      );
    },
  };
}

async function traced(): Promise<RunRecord> {
  const bus = new TraceBus();
  const runs: RunRecord[] = [];
  bus.listen((r) => runs.push(r));
  const tracer = bus.begin({ requestId: 'req-1', runner: 'r', sagaId: 'order', method: 'POST', path: '/order' })!;
  const result = await runSaga(deps(), {
    saga,
    input: {},
    context: { request: { method: 'POST', path: '/order', id: 'req-1', query: {} }, user: null },
    deadline: Date.now() + 5000,
    runId: 'run-1',
    trace: tracer.step,
  });
  tracer.end(result);
  assert.equal(runs.length, 1);
  return runs[0]!;
}

test('a failed run lists each undo (reverse order) with status, time and key, and compensation PARTIAL', async () => {
  const run = await traced();
  assert.equal(run.outcome, 'FAIL');
  assert.equal(run.compensation, 'PARTIAL');
  assert.deepEqual(
    run.undos?.map((u) => [u.step, u.status, u.key]),
    [
      ['charge', 'FAIL', 'run-1:charge:undo'],
      ['reserve', 'SUCCESS', 'run-1:reserve:undo'],
    ],
  );
  for (const u of run.undos!) assert.ok(typeof u.ms === 'number' && u.ms >= 0);
  assert.equal(run.undos![0]!.error?.code, 'ACTION_FAILED');
  assert.equal(run.undos![1]!.error, undefined);
  // The refund was tried three times (its own retry), each try shown.
  assert.deepEqual(
    run.undos![0]!.attempts?.map((a) => [a.attempt, a.status, a.code]),
    [
      [1, 'FAIL', 'ACTION_FAILED'],
      [2, 'FAIL', 'ACTION_FAILED'],
      [3, 'FAIL', 'ACTION_FAILED'],
    ],
  );
  assert.equal(run.undos![1]!.attempts, undefined, 'one try: no attempts list');
});

test('a retried step shows each attempt; a step tried once shows none', async () => {
  const run = await traced();
  const charge = run.steps.find((s) => s.step === 'charge')!;
  assert.equal(charge.status, 'SUCCESS');
  assert.deepEqual(
    charge.attempts?.map((a) => [a.attempt, a.status, a.code]),
    [
      [1, 'FAIL', 'ACTION_FAILED'],
      [2, 'SUCCESS', undefined],
    ],
  );
  assert.equal(run.steps.find((s) => s.step === 'reserve')!.attempts, undefined);
  assert.equal(run.steps.find((s) => s.step === 'ship')!.attempts, undefined);
});
