import { test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../core/logger.js';
import type { StepRecord } from '../core/trace.js';
import { runSaga } from './engine.js';
import { compileSaga } from '../testing/compile-saga.js';
import type { RawSaga } from './schema.js';

/** The engine's trace hook: one record per step, with the status, value, error and payload after it. */

const SAGA: RawSaga = {
  id: 'traced',
  path: '/t',
  steps: [
    { id: 'start', type: 'start', links: [{ to: 'calc' }] },
    { id: 'calc', type: 'transform', expression: '{ "x": 1 }', links: [{ to: 'ask' }] },
    {
      id: 'ask',
      type: 'event',
      eventMeta: { handler: 'h', action: 'A', version: 0 },
      links: [
        { to: 'done', when: ['SUCCESS'] },
        { to: 'check', when: ['FAIL'] },
      ],
    },
    { id: 'check', type: 'condition', expression: '$error.code', links: [{ to: 'gone', when: ['NOPE'] }] },
    { id: 'gone', type: 'fail' },
    { id: 'done', type: 'success' },
  ],
};

test('a traced run reports every step it took, a failed event with its error, a condition with its value', async () => {
  const records: [Omit<StepRecord, 'payload'>, unknown][] = [];
  const result = await runSaga(
    {
      log: silentLogger(),
      maxSteps: 100,
      dispatch: async () => ({
        status: 'FAIL',
        error: { code: 'NOPE', message: 'no', http: 409 },
        inputElement: null,
        outputElement: null,
      }),
    },
    {
      saga: compileSaga(SAGA, 5000),
      input: { a: 1 },
      context: { request: { method: 'GET', path: '/t', id: 'r', query: {} }, user: null },
      deadline: Date.now() + 5000,
      trace: (record, payload) => records.push([record, structuredClone(payload)]),
    },
  );
  assert.equal(result.outcome, 'FAIL');
  assert.deepEqual(
    records.map(([r]) => [r.step, r.kind, r.status, r.value, r.error?.code]),
    [
      ['start', 'start', 'SUCCESS', undefined, undefined],
      ['calc', 'transform', 'SUCCESS', undefined, undefined],
      ['ask', 'event', 'FAIL', undefined, 'NOPE'],
      ['check', 'condition', 'SUCCESS', 'NOPE', undefined],
      // A fail step without its own error ends the run with ask's: it stays on ask, where it arose.
      ['gone', 'fail', 'FAIL', undefined, undefined],
    ],
  );
  assert.equal(result.error?.step, 'ask');
  assert.deepEqual(records[0]![1], { parameters: { a: 1 } }, 'the payload after the start step');
  assert.deepEqual(records[1]![1], { x: 1 }, 'the payload after the transform');
  assert.ok(records.every(([r]) => typeof r.ms === 'number' && r.ms >= 0));
});
