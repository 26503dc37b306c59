import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SagaDefinition } from '../config/settings.js';
import { silentLogger } from '../core/logger.js';
import type { EventMessage, EventReply } from '../core/messages.js';
import type { Payload } from '../core/types.js';
import { runSaga, type EngineDeps, type RunProgress } from './engine.js';
import { compileSaga } from '../testing/compile-saga.js';
import type { RawStep } from './schema.js';
import { MAX_UNDO_BYTES } from './unwind.js';

/**
 * A journaled run resumed by another process (issue 12, issue 27): what the journal kept of the
 * run (visits of loop steps, registered compensations and their size) carries over, so that a step
 * revisited after the resume gets the key of its visit, not the first visit's (a reused key would
 * have the revisit's effect and its undo de-duplicated away as redeliveries of the first).
 */

/** start -> a (compensated) -> again: a once more, then d, which fails */
const loop = compileSaga(
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
        expression: '$exists(visited)',
        links: [
          { to: 'd', when: [true] },
          { to: 'mark', when: [false] },
        ],
      },
      { id: 'mark', type: 'transform', expression: 'true', outputElement: '$.visited', links: [{ to: 'a' }] },
      { id: 'd', type: 'event', eventMeta: { handler: 'inv', action: 'Do_d', version: 0 }, links: [{ to: 'ok' }] },
      { id: 'ok', type: 'success' },
    ] as RawStep[],
  } as SagaDefinition,
  5000,
);

function deps(calls: EventMessage[]): EngineDeps {
  return {
    log: silentLogger(),
    maxSteps: 100,
    dispatch: async (event: EventMessage): Promise<EventReply> => {
      calls.push(structuredClone(event));
      const fail = event.stepId === 'd';
      return {
        status: fail ? 'FAIL' : 'SUCCESS',
        output: event.stepId.toUpperCase(),
        ...(fail ? { error: { code: 'CARD_DECLINED', message: 'declined', http: 402 } } : {}),
        inputElement: null,
        outputElement: event.meta.outputElement ?? null,
      };
    },
  };
}

const context = () => ({ request: { method: 'POST', path: '/loop', id: 'req-1', query: {} }, user: null });
const keys = (calls: EventMessage[]) => calls.map((c) => c.idempotencyKey);
/** step and key of each event: an undo is sent as step `a:undo` */
const stepKeys = (calls: EventMessage[]) => calls.map((c) => `${c.stepId}@${c.idempotencyKey}`);

interface Journaled {
  next: string;
  payload: Payload;
  progress: RunProgress;
}

/** Runs the loop saga in one process and returns its journal writes. */
async function journalOfAWholeRun(): Promise<{ journal: Journaled[]; calls: EventMessage[] }> {
  const journal: Journaled[] = [];
  const calls: EventMessage[] = [];
  await runSaga(deps(calls), {
    saga: loop,
    input: {},
    context: context(),
    deadline: Date.now() + 5000,
    runId: 'run1',
    journal: async (next, payload, _ctx, progress) => {
      journal.push(structuredClone({ next, payload, progress }));
    },
  });
  return { journal, calls };
}

test('a loop step revisited after a resume gets the key of its second visit, and both visits are undone', async () => {
  const whole = await journalOfAWholeRun();
  assert.deepEqual(keys(whole.calls), ['run1:a', 'run1:a#2', 'run1:d', 'run1:a#2:undo', 'run1:a:undo']);
  // the journal after the first visit of a: it goes on at `again`, a visited once, its undo registered
  const afterFirst = whole.journal[0]!;
  assert.equal(afterFirst.next, 'again');
  assert.deepEqual(afterFirst.progress.visits, { a: 1 });
  assert.deepEqual(
    afterFirst.progress.undo.map((r) => r.key),
    ['run1:a:undo'],
  );
  // another process resumes there: the same keys as the uninterrupted run, from the resume on
  const calls: EventMessage[] = [];
  const journal: Journaled[] = [];
  const result = await runSaga(deps(calls), {
    saga: loop,
    input: {},
    context: context(),
    deadline: Date.now() + 5000,
    runId: 'run1',
    resume: { step: afterFirst.next, payload: afterFirst.payload, progress: afterFirst.progress },
    journal: async (next, payload, _ctx, progress) => {
      journal.push(structuredClone({ next, payload, progress }));
    },
  });
  assert.deepEqual(stepKeys(calls), ['a@run1:a#2', 'd@run1:d', 'a:undo@run1:a#2:undo', 'a:undo@run1:a:undo']);
  assert.equal(result.outcome, 'FAIL');
  assert.equal(result.error?.compensation, 'COMPLETED');
  // and its own journal goes on counting from the journaled visits
  assert.deepEqual(journal[0]?.progress.visits, { a: 2 });
  assert.deepEqual(
    journal[0]?.progress.undo.map((r) => r.key),
    ['run1:a:undo', 'run1:a#2:undo'],
  );
  // the undo of the first visit gets the payload of its moment, kept by the journal
  const firstUndo = calls.find((c) => c.idempotencyKey === 'run1:a:undo')!;
  assert.deepEqual(firstUndo.payload, { parameters: {}, a: 'A' });
});

test('a resume after the second visit: the journal counted both, the undo of each runs once', async () => {
  const whole = await journalOfAWholeRun();
  const afterSecond = whole.journal[1]!;
  assert.equal(afterSecond.next, 'again');
  assert.deepEqual(afterSecond.progress.visits, { a: 2 });
  const calls: EventMessage[] = [];
  const result = await runSaga(deps(calls), {
    saga: loop,
    input: {},
    context: context(),
    deadline: Date.now() + 5000,
    runId: 'run1',
    resume: { step: afterSecond.next, payload: afterSecond.payload, progress: afterSecond.progress },
  });
  assert.deepEqual(stepKeys(calls), ['d@run1:d', 'a:undo@run1:a#2:undo', 'a:undo@run1:a:undo']);
  assert.equal(result.error?.compensation, 'COMPLETED');
});

test('a resume without progress starts with nothing registered and counts visits from the resume', async () => {
  const calls: EventMessage[] = [];
  const result = await runSaga(deps(calls), {
    saga: loop,
    input: {},
    context: context(),
    deadline: Date.now() + 5000,
    runId: 'run1',
    resume: { step: 'again', payload: { parameters: {}, a: 'A' } },
  });
  assert.deepEqual(keys(calls), ['run1:a', 'run1:d', 'run1:a:undo']);
  assert.equal(result.error?.compensation, 'COMPLETED');
});

test('the payload copies a resumed run holds count against the bound with the ones journaled before', async () => {
  const big = 'x'.repeat(MAX_UNDO_BYTES - 200);
  const progress: RunProgress = {
    undo: [{ step: 'a', key: 'run1:a:undo', payload: { parameters: {}, big } }],
    visits: { a: 1 },
  };
  const calls: EventMessage[] = [];
  const result = await runSaga(deps(calls), {
    saga: loop,
    input: {},
    context: context(),
    deadline: Date.now() + 5000,
    runId: 'run1',
    resume: { step: 'again', payload: { parameters: {}, a: 'A', pad: 'y'.repeat(300) }, progress },
  });
  assert.equal(result.error?.code, 'UNDO_LIMIT_EXCEEDED');
  assert.deepEqual(keys(calls), ['run1:a#2', 'run1:a#2:undo', 'run1:a:undo']);
});

test('the unwind: an undo answered ACK is done; undos get a deadline ahead; a resumed unwind does not begin again', async () => {
  const whole = await journalOfAWholeRun();
  const afterFirst = whole.journal[0]!;
  const calls: EventMessage[] = [];
  const d = deps(calls);
  const dispatch = d.dispatch;
  d.dispatch = async (event, cancel) => {
    const reply = await dispatch(event, cancel);
    return event.stepId.endsWith(':undo') ? { ...reply, status: 'ACK' } : reply;
  };
  const started = Date.now();
  const result = await runSaga(d, {
    saga: loop,
    input: {},
    context: context(),
    deadline: Date.now() + 5000,
    runId: 'run1',
    resume: { step: afterFirst.next, payload: afterFirst.payload, progress: afterFirst.progress },
  });
  assert.equal(result.error?.compensation, 'COMPLETED', 'ACK is a done undo');
  for (const undo of calls.filter((c) => c.stepId.endsWith(':undo')))
    assert.ok(undo.deadline > started, 'the unwind has a budget of its own, ahead of now');
  // a run that was undoing when its process stopped: the undone ones are not begun or run again
  const log: string[] = [];
  const again: EventMessage[] = [];
  const resumed = await runSaga(deps(again), {
    saga: loop,
    input: {},
    context: context(),
    deadline: Date.now() + 5000,
    runId: 'run1',
    unwindJournal: {
      begin: async () => void log.push('begin'),
      undone: async (i, status) => void log.push(`undone ${i} ${status}`),
    },
    resumeUnwind: {
      undo: [
        { step: 'a', key: 'run1:a:undo', payload: { parameters: {} } },
        { step: 'a', key: 'run1:a#2:undo', payload: { parameters: {} } },
      ],
      done: [undefined, 'SUCCESS'],
      result: { outcome: 'FAIL', http: 402, error: { code: 'CARD_DECLINED', message: 'declined', http: 402 } },
    },
  });
  assert.deepEqual(log, ['undone 0 SUCCESS']);
  assert.deepEqual(keys(again), ['run1:a:undo']);
  assert.equal(resumed.error?.compensation, 'COMPLETED');
});

test('no journal write before a fail step (the outcome is written right after it)', async () => {
  const s = compileSaga(
    {
      id: 'f',
      path: '/f',
      source: { file: 'inline', at: [] },
      steps: [
        { id: 'start', type: 'start', links: [{ to: 'a' }] },
        { id: 'a', type: 'event', eventMeta: { handler: 'inv', action: 'Do_a', version: 0 }, links: [{ to: 'no' }] },
        { id: 'no', type: 'fail', error: { code: 'NOPE', message: 'no', http: 409 } },
      ] as RawStep[],
    } as SagaDefinition,
    5000,
  );
  const writes: string[] = [];
  const result = await runSaga(deps([]), {
    saga: s,
    input: {},
    context: context(),
    deadline: Date.now() + 5000,
    runId: 'run1',
    journal: async (next) => void writes.push(next),
  });
  assert.equal(result.error?.code, 'NOPE');
  assert.deepEqual(writes, []);
});
