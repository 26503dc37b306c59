import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RunRecord } from '../../core/trace.js';
import { maskSnapshots } from '../trace-mask.js';
import { decodeRun, encodeRun } from './console-trace.js';

const RUN: RunRecord = {
  requestId: 'r1',
  runner: 'main',
  sagaId: 's',
  method: 'GET',
  path: '/x',
  outcome: 'SUCCESS',
  http: 200,
  at: 1,
  ms: 2,
  steps: [
    { step: 'a', kind: 'transform', status: 'SUCCESS', ms: 1, payload: JSON.stringify({ big: 'x'.repeat(5000) }) },
  ],
};

test('a trace record over the byte bound loses its snapshots, then is dropped', () => {
  assert.deepEqual(decodeRun(encodeRun(RUN)!), RUN);
  const slim = decodeRun(encodeRun(RUN, 1000)!)!;
  assert.equal(slim.steps[0]!.payload, undefined);
  assert.equal(slim.steps[0]!.status, 'SUCCESS');
  assert.equal(encodeRun(RUN, 100), undefined);
});

test('what comes from the broker is shown only with the shape of a record', () => {
  for (const junk of ['nope', '[]', '{"requestId":1}', JSON.stringify({ ...RUN, steps: [{ step: 1 }] })]) {
    assert.equal(decodeRun(Buffer.from(junk)), undefined, junk);
  }
  assert.equal(decodeRun(Buffer.alloc(300 * 1024, 0x20)), undefined, 'too large');
});

test('maskSnapshots: each whole snapshot goes through the mask; a cut one and a step without one stay as they are', () => {
  const run: RunRecord = {
    ...RUN,
    steps: [
      { step: 'a', kind: 'transform', status: 'SUCCESS', ms: 1, payload: '{"email":"ada@example.org","n":1}' },
      { step: 'b', kind: 'transform', status: 'SUCCESS', ms: 1, payload: '{"email":"ada@exam…' },
      { step: 'c', kind: 'success', status: 'SUCCESS', ms: 1 },
    ],
  };
  const seen: unknown[] = [];
  const out = maskSnapshots(run, (v) => {
    seen.push(v);
    return { ...(v as object), email: '••••' };
  });
  assert.deepEqual(seen, [{ email: 'ada@example.org', n: 1 }]);
  assert.equal(out.steps[0]!.payload, '{"email":"••••","n":1}');
  assert.equal(out.steps[1]!.payload, '{"email":"ada@exam…');
  assert.equal(out.steps[2]!.payload, undefined);
  assert.equal(run.steps[0]!.payload, '{"email":"ada@example.org","n":1}', 'the record itself is not changed');
});
