import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SagaDefinition } from '../config/settings.js';
import { silentLogger } from '../core/logger.js';
import type { EventMessage, EventReply } from '../core/messages.js';
import { runSaga } from './engine.js';
import { compileSaga } from '../testing/compile-saga.js';

/**
 * Issue 26 ("Also"): a run whose failure came before any event reached a handler says so
 * (`ran: none`), so that the gateway does not store it against an Idempotency-Key; one where an
 * event may have run does not.
 */

const saga = compileSaga(
  {
    id: 'order',
    path: '/order',
    source: { file: 'inline', at: [] },
    steps: [
      { id: 'start', type: 'start', links: [{ to: 'reserve' }] },
      {
        id: 'reserve',
        type: 'event',
        eventMeta: { handler: 'inv', action: 'Reserve', version: 0, stream: 'inv' },
        links: [{ to: 'charge', when: ['SUCCESS'] }],
      },
      {
        id: 'charge',
        type: 'event',
        eventMeta: { handler: 'pay', action: 'Charge', version: 0, stream: 'pay' },
        links: [{ to: 'ok', when: ['SUCCESS'] }],
      },
      { id: 'ok', type: 'success' },
    ],
  } as unknown as SagaDefinition,
  5000,
);

const notSent: EventReply = {
  status: 'FAIL',
  error: { code: 'RUNNER_UNAVAILABLE', message: 'no live runner consumes stream' },
  inputElement: null,
  outputElement: null,
  sent: false,
};
const done: EventReply = { status: 'SUCCESS', output: {}, inputElement: null, outputElement: null };

function run(reply: (e: EventMessage) => EventReply) {
  return runSaga(
    { dispatch: async (e) => reply(e), log: silentLogger(), maxSteps: 100 },
    {
      saga,
      input: {},
      context: { request: { method: 'POST', path: '/order', id: 'r', query: {} }, user: null },
      deadline: Date.now() + 5000,
    },
  );
}

test('the first event not sent: the failure says nothing ran', async () => {
  const result = await run(() => notSent);
  assert.equal(result.outcome, 'FAIL');
  assert.equal(result.error?.code, 'UNHANDLED_STEP_FAILURE');
  assert.equal(result.ran, 'none');
});

test('an event that may have run before the failure: no such mark (the failure is the outcome)', async () => {
  const result = await run((e) => (e.stepId === 'reserve' ? done : notSent));
  assert.equal(result.outcome, 'FAIL');
  assert.equal(result.ran, undefined);
  const sentButFailed = await run(() => ({ ...notSent, sent: undefined }));
  assert.equal(sentButFailed.ran, undefined);
});
