import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { SagaDefinition } from '../config/settings.js';
import { Cancel } from '../core/cancel.js';
import type { ErrorInfo } from '../core/errors.js';
import { silentLogger } from '../core/logger.js';
import type { EventMessage, EventReply } from '../core/messages.js';
import type { EventStatus } from '../core/types.js';
import { runSaga, type EngineDeps } from './engine.js';
import { planRetry } from './retry.js';
import { compileSaga } from '../testing/compile-saga.js';
import { backoffDelay, type EngineClock } from './retry.js';
import type { RawRetry } from './schema.js';

/**
 * Retries of an event step (issue 12) with a fake clock: the number of tries, the delays
 * between them, the key they share, what `on` retries, and the deadline that ends them.
 */

function saga(retry: RawRetry, compensateRetry?: RawRetry) {
  return compileSaga(
    {
      id: 'pay',
      path: '/pay',
      source: { file: 'inline', at: [] },
      steps: [
        { id: 'start', type: 'start', links: [{ to: 'charge' }] },
        {
          id: 'charge',
          type: 'event',
          eventMeta: { handler: 'card', action: 'Charge', version: 0, outputElement: '$.charge' },
          retry,
          ...(compensateRetry
            ? { compensate: { eventMeta: { handler: 'card', action: 'Refund', version: 0 }, retry: compensateRetry } }
            : {}),
          links: [{ to: 'ok', when: ['SUCCESS'] }],
        },
        { id: 'ok', type: 'success' },
      ],
    } as SagaDefinition,
    60_000,
  );
}

/** A clock whose sleeps pass at once and are recorded. */
function fakeClock(random = 0.5): EngineClock & { sleeps: number[]; t: number } {
  const clock = {
    t: Date.now(),
    sleeps: [] as number[],
    now: () => clock.t,
    random: () => random,
    sleep: async (ms: number) => {
      clock.sleeps.push(ms);
      clock.t += ms;
    },
  };
  return clock;
}

/** Answers with the scripted replies in turn (the last one repeats). */
function deps(
  calls: EventMessage[],
  replies: { status: EventStatus; error?: ErrorInfo }[],
  clock: EngineClock,
  onCall?: () => void,
): EngineDeps & { tries: string[] } {
  const tries: string[] = [];
  return {
    tries,
    log: silentLogger(),
    maxSteps: 10,
    clock,
    observer: { tried: (_saga, step, status, attempt) => void tries.push(`${step} ${status} #${attempt}`) },
    dispatch: async (event): Promise<EventReply> => {
      calls.push(event);
      onCall?.();
      const r = replies[Math.min(calls.length - 1, replies.length - 1)]!;
      return { ...r, output: 'ok', inputElement: null, outputElement: event.meta.outputElement ?? null };
    },
  };
}

const unavailable = { status: 'FAIL' as const, error: { code: 'RUNNER_UNAVAILABLE', message: 'down', http: 503 } };
const declined = { status: 'FAIL' as const, error: { code: 'CARD_DECLINED', message: 'no', http: 402 } };
const context = () => ({ request: { method: 'POST', path: '/pay', id: 'req-9', query: {} }, user: null });

async function run(d: EngineDeps, s: ReturnType<typeof saga>, deadlineIn = 60_000, cancel?: Cancel) {
  const now = (d.clock as EngineClock).now();
  return runSaga(d, {
    saga: s,
    input: {},
    context: context(),
    deadline: now + deadlineIn,
    runId: 'req-9',
    ...(cancel ? { cancel } : {}),
  });
}

describe('retry', () => {
  test('tries until one succeeds, each with the same idempotency key and its own event id', async () => {
    const calls: EventMessage[] = [];
    const clock = fakeClock();
    const d = deps(calls, [unavailable, unavailable, { status: 'SUCCESS' }], clock);
    const result = await run(d, saga({ attempts: 5, backoff: 100, jitter: false }));
    assert.equal(result.outcome, 'SUCCESS');
    assert.equal(calls.length, 3);
    assert.deepEqual(new Set(calls.map((c) => c.idempotencyKey)), new Set(['req-9:charge']));
    assert.equal(new Set(calls.map((c) => c.id)).size, 3);
    assert.deepEqual(d.tries, ['charge FAIL #1', 'charge FAIL #2', 'charge SUCCESS #3']);
  });

  test('`attempts` counts all tries; the delays double up to maxBackoff', async () => {
    const calls: EventMessage[] = [];
    const clock = fakeClock();
    const d = deps(calls, [unavailable], clock);
    const result = await run(d, saga({ attempts: 6, backoff: '100ms', maxBackoff: '350ms', jitter: false }));
    assert.equal(result.outcome, 'FAIL');
    assert.equal(result.error?.cause?.code, 'RUNNER_UNAVAILABLE');
    assert.equal(calls.length, 6);
    assert.deepEqual(clock.sleeps, [100, 200, 350, 350, 350]);
  });

  test('full jitter: each delay is random between 0 and its computed value', async () => {
    const clock = fakeClock(0.25);
    await run(deps([], [unavailable], clock), saga({ attempts: 4, backoff: 100, maxBackoff: 1000 }));
    assert.deepEqual(clock.sleeps, [25, 50, 100]);
    const plan = planRetry({ attempts: 3, backoff: 100, jitter: true });
    for (let i = 0; i < 100; i++) {
      const delay = backoffDelay(plan, 3, Math.random);
      assert.ok(delay >= 0 && delay < 400, String(delay));
    }
  });

  test('default `on`: only the codes docs/errors.md marks retryable', async () => {
    const calls: EventMessage[] = [];
    await run(deps(calls, [declined], fakeClock()), saga({ attempts: 3 }));
    assert.equal(calls.length, 1, 'CARD_DECLINED is not a retryable code');
    const timeouts: EventMessage[] = [];
    await run(deps(timeouts, [{ status: 'TIMEOUT' }], fakeClock()), saga({ attempts: 3 }));
    assert.equal(timeouts.length, 3, 'a TIMEOUT (EVENT_TIMEOUT) is');
  });

  test('`on` lists the statuses and codes that are retried, and nothing else', async () => {
    const byCode: EventMessage[] = [];
    await run(deps(byCode, [declined], fakeClock()), saga({ attempts: 3, on: ['CARD_DECLINED'] }));
    assert.equal(byCode.length, 3);
    const byStatus: EventMessage[] = [];
    await run(deps(byStatus, [declined], fakeClock()), saga({ attempts: 3, on: ['FAIL'] }));
    assert.equal(byStatus.length, 3);
    const other: EventMessage[] = [];
    await run(deps(other, [unavailable], fakeClock()), saga({ attempts: 3, on: ['TIMEOUT'] }));
    assert.equal(other.length, 1, 'RUNNER_UNAVAILABLE is not in `on`');
  });

  test('no try starts when its delay would pass the saga deadline', async () => {
    const calls: EventMessage[] = [];
    const clock = fakeClock();
    // tries at 0, 100, 300; the next would wait 400 (until 700) but the deadline is at 650
    const result = await run(
      deps(calls, [unavailable], clock),
      saga({ attempts: 10, backoff: 100, jitter: false }),
      650,
    );
    assert.equal(calls.length, 3);
    assert.deepEqual(clock.sleeps, [100, 200]);
    assert.equal(result.error?.cause?.code, 'RUNNER_UNAVAILABLE');
  });

  test('retries stop when the caller goes away', async () => {
    const calls: EventMessage[] = [];
    const caller = new Cancel();
    const d = deps(calls, [unavailable], fakeClock(), () => caller.abort());
    const result = await run(d, saga({ attempts: 5, backoff: 10 }), 60_000, caller);
    assert.equal(calls.length, 1);
    assert.equal(result.error?.code, 'REQUEST_ABORTED');
  });

  test('a compensation is retried by its own `retry`, with one key for all its tries', async () => {
    const calls: EventMessage[] = [];
    const clock = fakeClock();
    // charge succeeds and the saga then fails: charge's undo fails twice (retryable), then succeeds
    const failing = compileSaga(
      {
        ...saga({ attempts: 1 }, { attempts: 3, backoff: 50, jitter: false }).raw,
        steps: [
          ...saga({ attempts: 1 }, { attempts: 3, backoff: 50, jitter: false }).raw.steps.filter((s) => s.id !== 'ok'),
          { id: 'ok', type: 'fail', error: { code: 'LATER_FAILURE' } },
        ],
        source: { file: 'inline', at: [] },
      } as SagaDefinition,
      60_000,
    );
    const d: EngineDeps = {
      ...deps(calls, [], clock),
      dispatch: async (event): Promise<EventReply> => {
        calls.push(event);
        const undoTries = calls.filter((c) => c.stepId === 'charge:undo').length;
        const status = event.stepId === 'charge' || undoTries === 3 ? 'SUCCESS' : 'FAIL';
        return {
          status,
          ...(status === 'FAIL' ? { error: unavailable.error } : {}),
          inputElement: null,
          outputElement: null,
        };
      },
    };
    const result = await run(d, failing);
    assert.equal(result.error?.code, 'LATER_FAILURE');
    assert.equal(result.error?.compensation, 'COMPLETED');
    const undos = calls.filter((c) => c.stepId === 'charge:undo');
    assert.equal(undos.length, 3);
    assert.deepEqual(new Set(undos.map((c) => c.idempotencyKey)), new Set(['req-9:charge:undo']));
    assert.deepEqual(clock.sleeps, [50, 100]);
  });
});
