import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { SagaDefinition } from '../config/settings.js';
import type { Cancellable } from '../core/cancel.js';
import { silentLogger } from '../core/logger.js';
import type { EventMessage, EventReply } from '../core/messages.js';
import type { EventStatus, SagaResult } from '../core/types.js';
import { runSaga, type EngineDeps, type Registration } from './engine.js';
import { compileSagaPlan } from './compile.js';
import { compileSaga } from '../testing/compile-saga.js';
import type { RawStep } from './schema.js';

/**
 * Compensation (issue 12): registration, reverse unwind, PARTIAL, pivot, compensate: false,
 * loops, the payload snapshot, the saga timeout, and the unwind journal. The dispatch is
 * scripted: it records every event and answers by step id.
 */

const undo = (action: string) => ({ eventMeta: { handler: 'inv', action, version: 0, inputElement: 'n' } });

/** An event step `id` that writes its output at $.<id>, with a compensation. */
function step(id: string, to: string, extra: Partial<RawStep> = {}): RawStep {
  return {
    id,
    type: 'event',
    eventMeta: { handler: 'inv', action: `Do_${id}`, version: 0, outputElement: `$.${id}` },
    compensate: undo(`Undo_${id}`),
    links: [{ to, when: ['SUCCESS'] }],
    ...extra,
  } as RawStep;
}

function saga(steps: RawStep[], timeout?: number): ReturnType<typeof compileSaga> {
  const raw = {
    id: 'order',
    path: '/order',
    source: { file: 'inline', at: [] },
    ...(timeout !== undefined ? { timeout } : {}),
    steps,
  } as SagaDefinition;
  return compileSaga(raw, 5000);
}

/** start -> a -> b -> c -> d (fails; no link handles it) */
const threeThenFail = saga([
  { id: 'start', type: 'start', links: [{ to: 'a' }] },
  step('a', 'b'),
  step('b', 'c'),
  step('c', 'd'),
  {
    id: 'd',
    type: 'event',
    eventMeta: { handler: 'inv', action: 'Do_d', version: 0 },
    links: [{ to: 'ok', when: ['SUCCESS'] }],
  },
  { id: 'ok', type: 'success' },
]);

interface Script {
  /** step id (or `<step>:undo`) -> status, default SUCCESS */
  status?: Record<string, EventStatus>;
  /** step id -> output */
  output?: Record<string, unknown>;
  /** never answer these (until cancelled) */
  hang?: Set<string>;
}

function deps(calls: EventMessage[], script: Script = {}): EngineDeps {
  return {
    log: silentLogger(),
    maxSteps: 100,
    dispatch: (event: EventMessage, cancel: Cancellable): Promise<EventReply> => {
      calls.push(structuredClone(event));
      if (script.hang?.has(event.stepId)) {
        return new Promise((resolve) =>
          cancel.onAbort(() => resolve({ status: 'TIMEOUT', inputElement: null, outputElement: null })),
        );
      }
      const status = script.status?.[event.stepId] ?? (event.stepId === 'd' ? 'FAIL' : 'SUCCESS');
      return Promise.resolve({
        status,
        output: script.output?.[event.stepId] ?? event.stepId.toUpperCase(),
        ...(status === 'FAIL' ? { error: { code: 'CARD_DECLINED', message: 'declined', http: 402 } } : {}),
        inputElement: null,
        outputElement: event.meta.outputElement ?? null,
      });
    },
  };
}

const context = () => ({ request: { method: 'POST', path: '/order', id: 'req-1', query: {} }, user: null });

function run(s: ReturnType<typeof compileSaga>, d: EngineDeps, extra: object = {}): Promise<SagaResult> {
  return runSaga(d, {
    saga: s,
    input: { n: 0 },
    context: context(),
    deadline: Date.now() + 5000,
    runId: 'run1',
    ...extra,
  });
}

const undos = (calls: EventMessage[]) => calls.filter((c) => c.stepId.endsWith(':undo'));

describe('compensation', () => {
  test('a failure after three steps undoes them in reverse order, each with <runId>:<stepId>:undo', async () => {
    const calls: EventMessage[] = [];
    const result = await run(threeThenFail, deps(calls));
    assert.equal(result.outcome, 'FAIL');
    assert.equal(result.error?.code, 'UNHANDLED_STEP_FAILURE');
    assert.equal(result.error?.compensation, 'COMPLETED');
    assert.deepEqual(
      undos(calls).map((c) => [c.stepId, c.idempotencyKey, c.meta.action]),
      [
        ['c:undo', 'run1:c:undo', 'Undo_c'],
        ['b:undo', 'run1:b:undo', 'Undo_b'],
        ['a:undo', 'run1:a:undo', 'Undo_a'],
      ],
    );
    // the steps themselves ran once each, before any undo
    assert.deepEqual(
      calls.map((c) => c.stepId),
      ['a', 'b', 'c', 'd', 'c:undo', 'b:undo', 'a:undo'],
    );
  });

  test('an undo that fails makes the compensation PARTIAL, and the others still run', async () => {
    const calls: EventMessage[] = [];
    const result = await run(threeThenFail, deps(calls, { status: { 'b:undo': 'FAIL' } }));
    assert.equal(result.error?.compensation, 'PARTIAL');
    assert.deepEqual(
      undos(calls).map((c) => c.stepId),
      ['c:undo', 'b:undo', 'a:undo'],
    );
  });

  test('a pivot that succeeds drops the compensations registered before it', async () => {
    const s = saga([
      { id: 'start', type: 'start', links: [{ to: 'a' }] },
      step('a', 'b'),
      { ...step('b', 'c', { pivot: true }), compensate: undefined } as RawStep,
      step('c', 'd'),
      { id: 'd', type: 'event', eventMeta: { handler: 'inv', action: 'Do_d', version: 0 }, links: [{ to: 'ok' }] },
      { id: 'ok', type: 'success' },
    ]);
    const calls: EventMessage[] = [];
    const result = await run(s, deps(calls));
    assert.equal(result.error?.compensation, 'COMPLETED');
    assert.deepEqual(
      undos(calls).map((c) => c.stepId),
      ['c:undo'],
    );
  });

  test('a fail step with compensate: false ends the saga without undoing anything', async () => {
    const steps = (compensate: boolean): RawStep[] => [
      { id: 'start', type: 'start', links: [{ to: 'a' }] },
      step('a', 'd'),
      {
        id: 'd',
        type: 'event',
        eventMeta: { handler: 'inv', action: 'Do_d', version: 0 },
        links: [
          { to: 'ok', when: ['SUCCESS'] },
          { to: 'stop', when: ['FAIL'] },
        ],
      },
      { id: 'ok', type: 'success' },
      {
        id: 'stop',
        type: 'fail',
        error: { code: 'ORDER_REFUSED', http: 409 },
        ...(compensate ? {} : { compensate: false }),
      } as RawStep,
    ];
    const skipped: EventMessage[] = [];
    const off = await run(saga(steps(false)), deps(skipped));
    assert.equal(off.error?.code, 'ORDER_REFUSED');
    assert.equal(off.error?.compensation, undefined);
    assert.equal(undos(skipped).length, 0);
    // the same path without the setting undoes `a`
    const done: EventMessage[] = [];
    const on = await run(saga(steps(true)), deps(done));
    assert.equal(on.error?.compensation, 'COMPLETED');
    assert.deepEqual(
      undos(done).map((c) => c.idempotencyKey),
      ['run1:a:undo'],
    );
  });

  test('a step visited twice (a loop) registers twice, with distinct keys, undone latest first', async () => {
    const s = saga([
      { id: 'start', type: 'start', links: [{ to: 'a' }] },
      step('a', 'again'),
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
    ]);
    const calls: EventMessage[] = [];
    const result = await runSaga(deps(calls), {
      saga: s,
      input: {},
      context: context(),
      deadline: Date.now() + 5000,
      runId: 'run1',
      payload: { parameters: {}, visited: {} },
    });
    assert.equal(result.error?.compensation, 'COMPLETED');
    assert.deepEqual(
      undos(calls).map((c) => c.idempotencyKey),
      ['run1:a#2:undo', 'run1:a:undo'],
    );
    // the steps' own keys follow the same convention
    assert.deepEqual(
      calls.filter((c) => c.stepId === 'a').map((c) => c.idempotencyKey),
      ['run1:a', 'run1:a#2'],
    );
  });

  test("an undo's input is the payload as it was when its step succeeded", async () => {
    // a writes n = 1, b then writes n = 2: a's undo still sees n = 1, b's sees 2
    const s = saga([
      { id: 'start', type: 'start', links: [{ to: 'a' }] },
      {
        ...step('a', 'b'),
        eventMeta: { handler: 'inv', action: 'Do_a', version: 0, outputElement: '$.n' },
      } as RawStep,
      {
        ...step('b', 'd'),
        eventMeta: { handler: 'inv', action: 'Do_b', version: 0, outputElement: '$.n' },
      } as RawStep,
      { id: 'd', type: 'event', eventMeta: { handler: 'inv', action: 'Do_d', version: 0 }, links: [{ to: 'ok' }] },
      { id: 'ok', type: 'success' },
    ]);
    const calls: EventMessage[] = [];
    await run(s, deps(calls, { output: { a: 1, b: 2 } }));
    assert.deepEqual(
      undos(calls).map((c) => [c.stepId, c.payload['n']]),
      [
        ['b:undo', 2],
        ['a:undo', 1],
      ],
    );
    // the undo also knows why the saga failed
    assert.equal(undos(calls)[0]?.context.error?.code, 'UNHANDLED_STEP_FAILURE');
  });

  test('a saga that succeeds, or fails with nothing registered, has no compensation', async () => {
    const calls: EventMessage[] = [];
    const ok = await run(threeThenFail, deps(calls, { status: { d: 'SUCCESS' } }));
    assert.equal(ok.outcome, 'SUCCESS');
    assert.equal(undos(calls).length, 0);
    const early = await run(threeThenFail, deps([], { status: { a: 'FAIL' } }));
    assert.equal(early.outcome, 'FAIL');
    assert.equal(early.error?.compensation, undefined);
  });

  test('the saga timeout unwinds too (the undos get a budget of their own)', async () => {
    const s = saga(threeThenFail.raw.steps, 100);
    const calls: EventMessage[] = [];
    const result = await runSaga(deps(calls, { hang: new Set(['d']) }), {
      saga: s,
      input: {},
      context: context(),
      deadline: Date.now() + 100,
      runId: 'run1',
    });
    assert.equal(result.outcome, 'TIMEOUT');
    assert.equal(result.error?.code, 'SAGA_TIMEOUT');
    assert.equal(result.error?.compensation, 'COMPLETED');
    assert.equal(undos(calls).length, 3);
  });

  test('the unwind journal gets the registrations first, then each undo; a resumed unwind skips the done ones', async () => {
    const log: string[] = [];
    let registered: readonly Registration[] = [];
    let ended: SagaResult | undefined;
    const calls: EventMessage[] = [];
    await run(threeThenFail, deps(calls, { status: { 'b:undo': 'FAIL' } }), {
      unwindJournal: {
        begin: async (u: readonly Registration[], r: SagaResult) => {
          registered = structuredClone(u);
          ended = r;
          log.push(`begin ${u.map((x) => x.key).join(',')}`);
        },
        undone: async (i: number, status: EventStatus) => void log.push(`undone ${i} ${status}`),
      },
    });
    assert.deepEqual(log, [
      'begin run1:a:undo,run1:b:undo,run1:c:undo',
      'undone 2 SUCCESS',
      'undone 1 FAIL',
      'undone 0 SUCCESS',
    ]);
    assert.equal(ended?.error?.compensation, undefined, 'the journaled result is the one before the unwind');

    // A process that takes the run over after c's undo goes on with b and a only.
    const again: EventMessage[] = [];
    const resumed = await runSaga(deps(again), {
      saga: threeThenFail,
      input: {},
      context: context(),
      deadline: Date.now() + 5000,
      runId: 'run1',
      resumeUnwind: { undo: registered, done: [null, null, 'SUCCESS'], result: ended as SagaResult },
    });
    assert.deepEqual(
      again.map((c) => c.idempotencyKey),
      ['run1:b:undo', 'run1:a:undo'],
    );
    assert.equal(resumed.error?.code, 'UNHANDLED_STEP_FAILURE');
    assert.equal(resumed.error?.compensation, 'COMPLETED');
  });

  test('a resumed run keeps the registrations and visits it journaled: they are undone, and keys stay distinct', async () => {
    const progress: { undo: Registration[]; visits: Record<string, number> }[] = [];
    const first: EventMessage[] = [];
    // the journal hook sees the registrations after each event step
    await run(threeThenFail, deps(first), {
      journal: async (
        _next: string,
        _p: unknown,
        _c: unknown,
        pr: { undo: Registration[]; visits: Record<string, number> },
      ) => void progress.push(structuredClone(pr)),
    });
    const afterB = progress[1] as { undo: Registration[]; visits: Record<string, number> };
    assert.deepEqual(
      afterB.undo.map((r) => r.key),
      ['run1:a:undo', 'run1:b:undo'],
    );
    assert.deepEqual(afterB.visits, { a: 1, b: 1 });
    // Another process resumes at c with that progress: c and d run, then all three are undone.
    const again: EventMessage[] = [];
    const resumed = await run(threeThenFail, deps(again), {
      resume: { step: 'c', payload: { parameters: {}, a: 'A', b: 'B' }, progress: afterB },
    });
    assert.equal(resumed.error?.compensation, 'COMPLETED');
    assert.deepEqual(
      again.map((c) => c.idempotencyKey),
      ['run1:c', 'run1:d', 'run1:c:undo', 'run1:b:undo', 'run1:a:undo'],
    );
  });

  test('the payload copies of one run are bounded: past 4 MiB the run ends UNDO_LIMIT_EXCEEDED and is undone', async () => {
    // a loops forever over a 1.5 MB payload; the third copy would pass the bound
    const s = saga([
      { id: 'start', type: 'start', links: [{ to: 'a' }] },
      {
        ...step('a', 'a'),
        links: [
          { to: 'a', when: ['SUCCESS'] },
          { to: 'ok', when: ['*'] },
        ],
      } as RawStep,
      { id: 'ok', type: 'success' },
    ]);
    const calls: EventMessage[] = [];
    const result = await runSaga(deps(calls), {
      saga: s,
      input: {},
      context: context(),
      deadline: Date.now() + 5000,
      runId: 'run1',
      payload: { parameters: {}, big: 'x'.repeat(1_500_000) },
    });
    assert.equal(result.error?.code, 'UNDO_LIMIT_EXCEEDED');
    assert.equal(result.error?.step, 'a');
    assert.equal(result.error?.compensation, 'COMPLETED');
    assert.deepEqual(
      undos(calls).map((c) => c.idempotencyKey),
      ['run1:a#3:undo', 'run1:a#2:undo', 'run1:a:undo'],
    );
  });

  test('an ACK registers only with followAck (without it the saga ends ACK, nothing to undo)', async () => {
    const withFollow = saga([
      { id: 'start', type: 'start', links: [{ to: 'a' }] },
      {
        ...step('a', 'd'),
        eventMeta: { handler: 'inv', action: 'Do_a', version: 0, outputElement: '$.a', followAck: true },
        links: [{ to: 'd', when: ['ACK'] }],
      } as RawStep,
      { id: 'd', type: 'event', eventMeta: { handler: 'inv', action: 'Do_d', version: 0 }, links: [{ to: 'ok' }] },
      { id: 'ok', type: 'success' },
    ]);
    const calls: EventMessage[] = [];
    const failed = await run(withFollow, deps(calls, { status: { a: 'ACK' } }));
    assert.equal(failed.error?.compensation, 'COMPLETED');
    assert.deepEqual(
      undos(calls).map((c) => c.idempotencyKey),
      ['run1:a:undo'],
    );
    const acked = await run(threeThenFail, deps([], { status: { a: 'ACK' } }));
    assert.equal(acked.outcome, 'ACK');
  });

  test('a journal write that fails stops the run without undoing anything (another process owns it)', async () => {
    const calls: EventMessage[] = [];
    const s = saga([
      { id: 'start', type: 'start', links: [{ to: 'a' }] },
      step('a', 'b'),
      step('b', 'ok'),
      { id: 'ok', type: 'success' },
    ]);
    // the write after `a` (a's compensation is registered by then) finds the run taken over
    const result = await run(s, deps(calls), {
      journal: async () => {
        throw Object.assign(new Error('taken over'), { code: 'RUNNER_UNAVAILABLE' });
      },
    });
    assert.equal(result.error?.code, 'RUNNER_UNAVAILABLE');
    assert.equal(result.outcome, 'FAIL');
    assert.equal(result.error?.compensation, undefined);
    assert.equal(undos(calls).length, 0);
  });
});

describe('load-time checks of compensation settings', () => {
  const check = (steps: RawStep[]) =>
    compileSagaPlan({ id: 's', path: '/s', steps } as never, 5000)
      .issues.filter((i) => i.severity === 'error')
      .map((i) => `${i.at.join('.')}: ${i.message}`);

  test('pivot and retry only on event steps, compensate: false only on fail steps, a pivot has no undo', () => {
    const errors = check([
      { id: 'start', type: 'start', links: [{ to: 'p' }], pivot: true } as RawStep,
      { ...step('p', 't', { pivot: true }) } as RawStep,
      { id: 't', type: 'transform', expression: '$', retry: { attempts: 2 }, links: [{ to: 'e' }] } as RawStep,
      { ...step('e', 'ok'), compensate: false } as RawStep,
      { id: 'ok', type: 'success', compensate: undo('X') } as RawStep,
    ]);
    assert.deepEqual(errors, [
      'steps.0.pivot: a pivot is an event step',
      'steps.1.compensate: a pivot cannot be undone: it has no compensation',
      'steps.2.retry: only an event step retries',
      'steps.3.compensate: only a fail step may say compensate: false',
      'steps.4.compensate: only an event step has a compensation',
    ]);
  });

  test('timeouts and retry delays longer than a Node.js timer keeps (24.8 days) are refused, not run at once', () => {
    const long = '600h';
    const errors = compileSagaPlan(
      {
        id: 's',
        path: '/s',
        timeout: long,
        steps: [
          { id: 'start', type: 'start', links: [{ to: 'e' }] },
          {
            ...step('e', 'ok'),
            eventMeta: { handler: 'inv', action: 'Do', version: 0, timeout: long },
            retry: { attempts: 3, backoff: long, maxBackoff: long },
            compensate: { ...undo('U'), retry: { attempts: 2, maxBackoff: '1000h' } },
          } as RawStep,
          { id: 'ok', type: 'success' },
        ],
      } as never,
      5000,
    )
      .issues.filter((i) => i.severity === 'error')
      .map((i) => i.at.join('.'));
    assert.deepEqual(errors.sort(), [
      'steps.1.compensate.retry.maxBackoff',
      'steps.1.eventMeta.timeout',
      'steps.1.retry.backoff',
      'steps.1.retry.maxBackoff',
      'timeout',
    ]);
    assert.deepEqual(
      check([
        { id: 'start', type: 'start', links: [{ to: 'e' }] },
        { ...step('e', 'ok'), retry: { attempts: 2, maxBackoff: '596h' } } as RawStep,
        { id: 'ok', type: 'success' },
      ]),
      [],
      '596 h still fits',
    );
  });

  test("the undo's paths are checked like the step's own", () => {
    const errors = check([
      { id: 'start', type: 'start', links: [{ to: 'e' }] },
      {
        ...step('e', 'ok'),
        compensate: { eventMeta: { handler: 'inv', action: 'U', version: 0, inputElement: 'a.__proto__' } },
      } as RawStep,
      { id: 'ok', type: 'success' },
    ]);
    assert.equal(errors.length, 1);
    assert.match(errors[0] as string, /^steps\.1\.compensate\.eventMeta\.inputElement: /);
  });
});
