import assert from 'node:assert/strict';
import { test } from 'node:test';
import { silentLogger } from '../core/logger.js';
import type { EventMessage, EventReply } from '../core/messages.js';
import type { RequestContext } from '../core/types.js';
import { runSaga } from './engine.js';
import type { CompiledStep } from './graph.js';
import { compileSaga } from '../testing/compile-saga.js';

/** The compile stage's plan (saga/graph.ts planSaga) and the engine's use of it. */

const saga = compileSaga(
  {
    id: 'plan',
    path: '/plan',
    timeout: '2s',
    steps: [
      { id: 'start', type: 'start', links: [{ to: 'e' }] },
      {
        id: 'e',
        type: 'event',
        eventMeta: { handler: 'h', action: 'A', version: 0, timeout: '250ms', outputElement: '$.out' },
        links: [
          { to: 'ok', when: ['SUCCESS'] },
          { to: 'check', when: ['FAIL'] },
        ],
      },
      {
        id: 'check',
        type: 'condition',
        expression: '$error.code',
        links: [
          { to: 'handled', when: ['BOOM'] },
          { to: 'bad', when: ['*'] },
        ],
      },
      { id: 'handled', type: 'success', http: 202, outputElement: 'out' },
      { id: 'ok', type: 'success', outputElement: 'out' },
      { id: 'bad', type: 'fail' },
    ],
  },
  10_000,
);

test('every step kind is its own variant, with its settings parsed once', () => {
  const kinds = new Map([...saga.steps.values()].map((s: CompiledStep) => [s.id, s.type]));
  assert.deepEqual(Object.fromEntries(kinds), {
    start: 'start',
    e: 'event',
    check: 'condition',
    handled: 'success',
    ok: 'success',
    bad: 'fail',
  });
  const e = saga.steps.get('e');
  assert.ok(e?.type === 'event');
  assert.equal(e.meta.timeoutMs, 250);
  assert.equal(e.meta.stream, 'local');
  assert.deepEqual(e.meta.elements?.parsed.output, {
    kind: 'path',
    path: { text: '$.out', root: true, segments: ['out'] },
  });
  assert.equal(saga.timeoutMs, 2000);
  const handled = saga.steps.get('handled');
  assert.ok(handled?.type === 'success');
  assert.equal(handled.http, 202);
});

test('links lead to the step objects themselves, and the plan is frozen', () => {
  const start = saga.start;
  assert.equal(start.links[0]?.target, saga.steps.get('e'));
  assert.equal(saga.steps.get('e')?.links[1]?.target, saga.steps.get('check'));
  assert.ok(
    Object.isFrozen(saga) && Object.isFrozen(start) && Object.isFrozen(start.links) && Object.isFrozen(start.links[0]),
  );
  assert.throws(() => {
    (saga as { timeoutMs: number }).timeoutMs = 1;
  }, TypeError);
});

test("a run never changes the context it was given: the step error and status live in the run's own", async () => {
  const context: RequestContext = Object.freeze({
    request: Object.freeze({ method: 'GET', path: '/plan', id: 'r1', query: {} }),
    user: null,
  });
  const seen: EventMessage[] = [];
  const dispatch = async (event: EventMessage): Promise<EventReply> => {
    seen.push(event);
    return { status: 'FAIL', error: { code: 'BOOM', message: 'no' }, inputElement: null, outputElement: '$.out' };
  };
  const result = await runSaga(
    { dispatch, log: silentLogger(), maxSteps: 100 },
    { saga, input: {}, context, deadline: Date.now() + 2000 },
  );
  // the condition read $error from the run's context: the failure was handled by its link
  assert.equal(result.outcome, 'SUCCESS', JSON.stringify(result.error));
  assert.equal(result.http, 202);
  assert.deepEqual(context, { request: { method: 'GET', path: '/plan', id: 'r1', query: {} }, user: null });
  assert.equal(seen[0]?.context, context, 'the first event saw the context as given');
});
