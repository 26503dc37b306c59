import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SagaDefinition } from '../config/settings.js';
import { silentLogger } from '../core/logger.js';
import type { EventMessage, EventReply } from '../core/messages.js';
import type { Payload } from '../core/types.js';
import { runSaga, type EngineDeps, type RunProgress } from './engine.js';
import { compileSaga } from '../testing/compile-saga.js';

/**
 * A loop step revisited after a resume: the journal keeps how often each event step was visited,
 * so that the resumed run's second visit of `a` is `run1:a#2` (and its undo `run1:a#2:undo`), not
 * a repeat of the first visit's key that the handler would de-duplicate away.
 */

/** start -> a -> again? (first time: mark -> a) -> d (fails) ; a has an undo */
const saga = compileSaga(
  {
    id: 'loop',
    path: '/loop',
    source: { file: 'inline', at: [] },
    steps: [
      { id: 'start', type: 'start', links: [{ to: 'a' }] },
      {
        id: 'a',
        type: 'event',
        eventMeta: { handler: 'inv', action: 'Do_a', version: 0, outputElement: '$.a' },
        compensate: { eventMeta: { handler: 'inv', action: 'Undo_a', version: 0 } },
        links: [{ to: 'again', when: ['SUCCESS'] }],
      },
      {
        id: 'again',
        type: 'condition',
        expression: '$count($keys(visited)) > 0',
        links: [
          { to: 'd', when: [true] },
          { to: 'mark', when: [false] },
        ],
      },
      {
        id: 'mark',
        type: 'transform',
        expression: '{"visited": {"once": true}}',
        outputElement: '$.visited',
        links: [{ to: 'a' }],
      },
      { id: 'd', type: 'event', eventMeta: { handler: 'inv', action: 'Do_d', version: 0 }, links: [{ to: 'ok' }] },
      { id: 'ok', type: 'success' },
    ],
  } as SagaDefinition,
  5000,
);

/** A dispatch that records every event; `d` fails, everything else succeeds. */
function deps(calls: EventMessage[]): EngineDeps {
  return {
    log: silentLogger(),
    maxSteps: 100,
    dispatch: async (event: EventMessage): Promise<EventReply> => {
      calls.push(structuredClone(event));
      const status = event.stepId === 'd' ? 'FAIL' : 'SUCCESS';
      return {
        status,
        output: event.stepId.toUpperCase(),
        ...(status === 'FAIL' ? { error: { code: 'DECLINED', message: 'declined' } } : {}),
        inputElement: null,
        outputElement: event.meta.outputElement ?? null,
      };
    },
  };
}

const context = () => ({ request: { method: 'POST', path: '/loop', id: 'req-1', query: {} }, user: null });
const keys = (calls: EventMessage[]) => calls.map((c) => `${c.stepId}@${c.idempotencyKey}`);

test('a loop step revisited after a resume gets the #2 key, and its undo #2:undo', async () => {
  // The first life: journal every step; it runs to its end (the reference).
  const journal: { next: string; payload: Payload; progress: RunProgress }[] = [];
  const first: EventMessage[] = [];
  await runSaga(deps(first), {
    saga,
    input: {},
    context: context(),
    deadline: Date.now() + 5000,
    runId: 'run1',
    payload: { parameters: {}, visited: {} },
    journal: async (next, payload, _context, progress) => {
      journal.push({ next, payload: structuredClone(payload), progress: structuredClone(progress) });
    },
  });
  assert.deepEqual(keys(first), ['a@run1:a', 'a@run1:a#2', 'd@run1:d', 'a:undo@run1:a#2:undo', 'a:undo@run1:a:undo']);
  // After the first visit of `a` the journal says: next `again`, `a` visited once, one undo.
  const afterFirst = journal[0]!;
  assert.equal(afterFirst.next, 'again');
  assert.deepEqual(afterFirst.progress.visits, { a: 1 });
  assert.equal(afterFirst.progress.undo.length, 1);

  // The process died there; the next one resumes from that journal entry.
  const resumed: EventMessage[] = [];
  const result = await runSaga(deps(resumed), {
    saga,
    input: {},
    context: context(),
    deadline: Date.now() + 5000,
    runId: 'run1',
    resume: { step: afterFirst.next, payload: afterFirst.payload, progress: afterFirst.progress },
  });
  assert.equal(result.outcome, 'FAIL');
  assert.equal(result.error?.compensation, 'COMPLETED');
  // the same keys as the life that was never interrupted: the second visit is #2, not a repeat of a
  assert.deepEqual(keys(resumed), ['a@run1:a#2', 'd@run1:d', 'a:undo@run1:a#2:undo', 'a:undo@run1:a:undo']);
});

test('a resume after the second visit: the journal counted both, the undo of each runs once', async () => {
  const journal: { next: string; payload: Payload; progress: RunProgress }[] = [];
  await runSaga(deps([]), {
    saga,
    input: {},
    context: context(),
    deadline: Date.now() + 5000,
    runId: 'run1',
    payload: { parameters: {}, visited: {} },
    journal: async (next, payload, _context, progress) => {
      journal.push({ next, payload: structuredClone(payload), progress: structuredClone(progress) });
    },
  });
  const afterSecond = journal[1]!;
  assert.deepEqual(afterSecond.progress.visits, { a: 2 });
  const resumed: EventMessage[] = [];
  await runSaga(deps(resumed), {
    saga,
    input: {},
    context: context(),
    deadline: Date.now() + 5000,
    runId: 'run1',
    resume: { step: afterSecond.next, payload: afterSecond.payload, progress: afterSecond.progress },
  });
  assert.deepEqual(keys(resumed), ['d@run1:d', 'a:undo@run1:a#2:undo', 'a:undo@run1:a:undo']);
});
