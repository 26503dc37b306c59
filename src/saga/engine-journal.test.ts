import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SagaDefinition } from '../config/settings.js';
import { SagawayError } from '../core/errors.js';
import { silentLogger } from '../core/logger.js';
import type { Payload } from '../core/types.js';
import type { EventMessage, EventReply } from '../core/messages.js';
import { runSaga, type EngineDeps } from './engine.js';
import { compileSaga } from '../testing/compile-saga.js';

/** start -> a (event) -> t (transform) -> b (event) -> ok */
const saga = compileSaga(
  {
    id: 'j',
    path: '/j',
    source: { file: 'inline', at: [] },
    steps: [
      { id: 'start', type: 'start', links: [{ to: 'a' }] },
      {
        id: 'a',
        type: 'event',
        eventMeta: { handler: 'h', action: 'A', version: 0, outputElement: '$.a' },
        links: [{ to: 't' }],
      },
      { id: 't', type: 'transform', expression: '$merge([$, {"t": true}])', links: [{ to: 'b' }] },
      {
        id: 'b',
        type: 'event',
        eventMeta: { handler: 'h', action: 'B', version: 0, outputElement: '$.b' },
        links: [{ to: 'ok' }],
      },
      { id: 'ok', type: 'success' },
    ],
  } as SagaDefinition,
  5000,
);

function deps(calls: string[]): EngineDeps {
  return {
    log: silentLogger(),
    maxSteps: 100,
    dispatch: async (event: EventMessage): Promise<EventReply> => {
      calls.push(`${event.stepId}@${event.idempotencyKey}`);
      return {
        status: 'SUCCESS',
        output: event.stepId.toUpperCase(),
        inputElement: null,
        outputElement: event.meta.outputElement ?? null,
      };
    },
  };
}

const context = () => ({ request: { method: 'GET', path: '/j', id: 'r1', query: {} }, user: null });

test('journal: called after each event step with the next step and the payload so far (not before an end step)', async () => {
  const calls: string[] = [];
  const journal: { next: string; payload: Payload }[] = [];
  const result = await runSaga(deps(calls), {
    saga,
    input: { x: 1 },
    context: context(),
    deadline: Date.now() + 5000,
    runId: 'run1',
    journal: async (next, payload) => {
      journal.push({ next, payload: structuredClone(payload) });
    },
  });
  assert.equal(result.outcome, 'SUCCESS');
  assert.deepEqual(calls, ['a@run1:a', 'b@run1:b']);
  assert.deepEqual(
    journal.map((j) => j.next),
    ['t'],
  );
  assert.deepEqual(journal[0]!.payload, { parameters: { x: 1 }, a: 'A' });
});

test('resume: starts at the journaled step with the journaled payload; earlier steps do not run again', async () => {
  const calls: string[] = [];
  const result = await runSaga(deps(calls), {
    saga,
    input: {},
    context: context(),
    deadline: Date.now() + 5000,
    runId: 'run2',
    resume: { step: 't', payload: { parameters: { x: 2 }, a: 'from-journal' } },
  });
  assert.equal(result.outcome, 'SUCCESS');
  assert.deepEqual(calls, ['b@run2:b']);
  assert.deepEqual(result.response, { a: 'from-journal', t: true, b: 'B' });
});

test('journal failure ends the run with its error (a database outage is a 503, not a crash)', async () => {
  const result = await runSaga(deps([]), {
    saga,
    input: {},
    context: context(),
    deadline: Date.now() + 5000,
    journal: async () => {
      throw new SagawayError('STATE_UNAVAILABLE', 'db down');
    },
  });
  assert.equal(result.outcome, 'FAIL');
  assert.equal(result.error?.code, 'STATE_UNAVAILABLE');
  assert.equal(result.http, 503);
});

test('started: awaited once, before the first event is dispatched; a failure dispatches nothing', async () => {
  const calls: string[] = [];
  const order: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let startedCalls = 0;
  const dispatching = deps(calls);
  const running = runSaga(
    { ...dispatching, dispatch: (e, c) => (order.push(`dispatch ${e.stepId}`), dispatching.dispatch(e, c)) },
    {
      saga,
      input: {},
      context: context(),
      deadline: Date.now() + 5000,
      runId: 'run3',
      started: async () => {
        startedCalls++;
        await gate;
        order.push('started');
      },
    },
  );
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(calls, [], 'no event before the start record is committed');
  release();
  assert.equal((await running).outcome, 'SUCCESS');
  assert.deepEqual(order, ['started', 'dispatch a', 'dispatch b']);
  assert.equal(startedCalls, 1);

  const none: string[] = [];
  const refused = await runSaga(deps(none), {
    saga,
    input: {},
    context: context(),
    deadline: Date.now() + 5000,
    started: async () => {
      throw new SagawayError('STATE_UNAVAILABLE', 'db down');
    },
  });
  assert.equal(refused.http, 503);
  assert.equal(refused.error?.code, 'STATE_UNAVAILABLE');
  assert.deepEqual(none, [], 'nothing dispatched without a start record');
});
