import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { SagaDefinition } from '../config/settings.js';
import { silentLogger } from '../core/logger.js';
import type { EventMessage, EventReply } from '../core/messages.js';
import type { RunSpan, StepSpan } from '../core/otel.js';
import { runSaga, type EngineDeps } from './engine.js';
import { compileSaga } from '../testing/compile-saga.js';

/**
 * The engine's OpenTelemetry hooks (docs/tracing.md) with a recording span: a span per step,
 * ended with how the step ended; an event carries its step's context and its try number; and
 * without a run span, no event carries anything.
 */

const saga = compileSaga(
  {
    id: 'pay',
    path: '/pay',
    source: { file: 'inline', at: [] },
    steps: [
      { id: 'start', type: 'start', links: [{ to: 'charge' }] },
      {
        id: 'charge',
        type: 'event',
        eventMeta: { handler: 'card', action: 'Charge', version: 2, outputElement: '$.charge' },
        retry: { attempts: 3, backoff: 1, jitter: false },
        links: [{ to: 'ok', when: ['SUCCESS'] }],
      },
      { id: 'ok', type: 'success' },
    ],
  } as SagaDefinition,
  60_000,
);

function deps(calls: EventMessage[], statuses: EventReply['status'][]): EngineDeps {
  return {
    log: silentLogger(),
    maxSteps: 10,
    dispatch: async (event) => {
      calls.push(event);
      const status = statuses[Math.min(calls.length - 1, statuses.length - 1)]!;
      return {
        status,
        ...(status === 'FAIL' ? { error: { code: 'RUNNER_UNAVAILABLE', message: 'secret detail', http: 503 } } : {}),
        output: 'ok',
        inputElement: null,
        outputElement: '$.charge',
      };
    },
  };
}

/** A run span that records what the engine tells it. */
function recordingRun(): RunSpan & { log: string[] } {
  const log: string[] = [];
  let n = 0;
  return {
    log,
    carrier: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    end: () => undefined,
    step(id, kind): StepSpan {
      log.push(`start ${id} ${kind}`);
      const span = `${(++n).toString(16).padStart(16, '0')}`;
      return {
        carrier: { traceparent: `00-0af7651916cd43dd8448eb211c80319c-${span}-01` },
        end: (outcome, code) => void log.push(`end ${id} ${outcome}${code ? ` ${code}` : ''}`),
        tried: (attempt, status, code) => void log.push(`try ${id} #${attempt} ${status}${code ? ` ${code}` : ''}`),
      };
    },
  };
}

const context = () => ({ request: { method: 'POST', path: '/pay', id: 'req-1', query: {} }, user: null });

describe('OpenTelemetry hooks of the engine', () => {
  test('off: no span work, and no event carries a trace context or a try number', async () => {
    const calls: EventMessage[] = [];
    const result = await runSaga(deps(calls, ['FAIL', 'SUCCESS']), {
      saga,
      input: {},
      context: context(),
      deadline: Date.now() + 10_000,
      runId: 'req-1',
    });
    assert.equal(result.outcome, 'SUCCESS');
    assert.equal(calls.length, 2);
    for (const c of calls) {
      assert.equal(c.trace, undefined);
      assert.equal(c.attempt, undefined);
      assert.ok(!('trace' in c) && !('attempt' in c), 'no field at all');
    }
  });

  test('on: one span per step, tries recorded, the event carries its step span and try number', async () => {
    const calls: EventMessage[] = [];
    const otel = recordingRun();
    const result = await runSaga(deps(calls, ['FAIL', 'SUCCESS']), {
      saga,
      input: {},
      context: context(),
      deadline: Date.now() + 10_000,
      runId: 'req-1',
      otel,
    });
    assert.equal(result.outcome, 'SUCCESS');
    assert.deepEqual(otel.log, [
      'start start start',
      'end start SUCCESS',
      'start charge event',
      'try charge #1 FAIL RUNNER_UNAVAILABLE',
      'try charge #2 SUCCESS',
      'end charge SUCCESS',
      'start ok success',
      'end ok SUCCESS',
    ]);
    // both tries carry the charge step's span (the second one of the run); the second says so
    assert.deepEqual(
      calls.map((c) => [c.trace?.traceparent, c.attempt]),
      [
        ['00-0af7651916cd43dd8448eb211c80319c-0000000000000002-01', undefined],
        ['00-0af7651916cd43dd8448eb211c80319c-0000000000000002-01', 2],
      ],
    );
  });

  test('a failed step ends its span with the error code, never the message', async () => {
    const calls: EventMessage[] = [];
    const otel = recordingRun();
    const result = await runSaga(deps(calls, ['FAIL']), {
      saga,
      input: {},
      context: context(),
      deadline: Date.now() + 10_000,
      runId: 'req-1',
      otel,
    });
    assert.equal(result.outcome, 'FAIL');
    assert.ok(otel.log.includes('end charge FAIL RUNNER_UNAVAILABLE'), otel.log.join('\n'));
    assert.ok(!otel.log.join('\n').includes('secret detail'));
  });

  test('a compensation has its own span, and its event carries it', async () => {
    const undoSaga = compileSaga(
      {
        id: 'order',
        path: '/order',
        source: { file: 'inline', at: [] },
        steps: [
          { id: 'start', type: 'start', links: [{ to: 'reserve' }] },
          {
            id: 'reserve',
            type: 'event',
            eventMeta: { handler: 'shop', action: 'Reserve', version: 0, outputElement: '-' },
            compensate: { eventMeta: { handler: 'shop', action: 'Release', version: 0 } },
            links: [{ to: 'charge', when: ['SUCCESS'] }],
          },
          {
            id: 'charge',
            type: 'event',
            eventMeta: { handler: 'shop', action: 'Charge', version: 0, outputElement: '-' },
            links: [{ to: 'ok', when: ['SUCCESS'] }],
          },
          { id: 'ok', type: 'success' },
        ],
      } as SagaDefinition,
      60_000,
    );
    const calls: EventMessage[] = [];
    const otel = recordingRun();
    const d: EngineDeps = {
      log: silentLogger(),
      maxSteps: 10,
      dispatch: async (event) => {
        calls.push(event);
        const fail = event.stepId === 'charge';
        return {
          status: fail ? 'FAIL' : 'SUCCESS',
          ...(fail ? { error: { code: 'CARD_DECLINED', message: 'no', http: 402 } } : {}),
          inputElement: null,
          outputElement: null,
        };
      },
    };
    const result = await runSaga(d, {
      saga: undoSaga,
      input: {},
      context: context(),
      deadline: Date.now() + 10_000,
      runId: 'r',
      otel,
    });
    assert.equal(result.outcome, 'FAIL');
    assert.ok(otel.log.includes('start reserve:undo undo'), otel.log.join('\n'));
    assert.ok(otel.log.includes('end reserve:undo SUCCESS'), otel.log.join('\n'));
    const undo = calls.find((c) => c.stepId === 'reserve:undo');
    assert.match(undo?.trace?.traceparent ?? '', /^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/);
    assert.notEqual(undo?.trace?.traceparent, calls.find((c) => c.stepId === 'reserve')?.trace?.traceparent);
  });
});
