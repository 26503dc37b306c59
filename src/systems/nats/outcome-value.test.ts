import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Names } from './names.js';
import {
  bucketName,
  correlationKey,
  decodeIndex,
  decodeOutcome,
  encodeDone,
  encodeIndex,
  encodeOutcome,
  encodeRunning,
  outcomeHead,
  outcomeKey,
  statusOfOutcome,
  type OutcomeValue,
} from './outcome-value.js';

const base: OutcomeValue = {
  v: 1,
  requestId: 'r1',
  runner: 'api',
  deployment: '1',
  owner: 'i1',
  status: 'DONE',
  outcome: 'FAIL',
  http: 409,
  startedAt: 1000,
  updatedAt: 2000,
};
const decode = (b: Uint8Array) => decodeOutcome(b)!;

test('a value within the cap is kept whole', () => {
  const v = { ...base, outcome: 'SUCCESS' as const, http: 200, response: { a: 1 } };
  assert.deepEqual(decode(encodeOutcome(v, 1024)), v);
});

test('a larger response is left out, with its size; the outcome stays', () => {
  const response = { big: 'x'.repeat(5000) };
  const bytes = encodeOutcome({ ...base, outcome: 'SUCCESS', http: 200, response }, 1024);
  assert.ok(bytes.length <= 1024);
  const v = decode(bytes);
  assert.equal(v.response, undefined);
  assert.equal(v.responseOmitted, JSON.stringify(response).length);
  assert.equal(v.outcome, 'SUCCESS');
  assert.equal(v.http, 200);
});

test('a huge error keeps its code, http, step, compensation and the start of its message', () => {
  const error = { code: 'BOOM', message: 'm'.repeat(5000), http: 502, step: 's', compensation: 'PARTIAL' as const };
  const v = decode(encodeOutcome({ ...base, error }, 1024));
  assert.deepEqual(v.error, { code: 'BOOM', message: 'm'.repeat(512), http: 502, step: 's', compensation: 'PARTIAL' });
  // within the cap, the error object is carried whole (other fields included)
  const small = { code: 'X', message: 'y', compensation: 'COMPLETED' as const, cause: { code: 'Z', message: 'z' } };
  assert.deepEqual(decode(encodeOutcome({ ...base, error: small }, 1024)).error, small);
});

test('keys are bound to the caller; names are valid KV names', () => {
  assert.notEqual(outcomeKey('key:alice', 'r1'), outcomeKey('key:bob', 'r1'));
  assert.notEqual(outcomeKey('key:alice', 'r1'), correlationKey('key:alice', 'r1'));
  assert.match(outcomeKey('anon:1.2.3.4', 'x'), /^run-[0-9a-f]{40}$/);
  assert.equal(bucketName(new Names('shop'), 'pricing'), 'shop_status_pricing');
  assert.match(bucketName(new Names('p'), 'has space.dot'), /^p_status_h[0-9a-f]{24}$/);
});

test('index entries and outcomes are not mistaken for each other; junk is refused', () => {
  const index = encodeIndex('r9');
  assert.deepEqual(decodeIndex(index), { requestId: 'r9' });
  assert.equal(decodeOutcome(index), undefined);
  assert.equal(decodeIndex(encodeOutcome(base, 1024)), undefined);
  assert.equal(decodeOutcome(Buffer.from('not json')), undefined);
  assert.equal(decodeOutcome(Buffer.from(JSON.stringify({ ...base, status: 'WHATEVER' }))), undefined);
});

test('the status view: ISO times, LOST only for a RUNNING value whose owner is gone', () => {
  const s = statusOfOutcome(base, true);
  assert.equal(s.status, 'DONE');
  assert.equal(s.startedAt, new Date(1000).toISOString());
  assert.equal(statusOfOutcome({ ...base, status: 'RUNNING' }, true).status, 'LOST');
  assert.equal(statusOfOutcome({ ...base, status: 'RUNNING' }, false).status, 'RUNNING');
  assert.equal('owner' in s || 'runner' in s, false);
});

test('the joined RUNNING and DONE values decode like encodeOutcome; a large one is cut down the same way', () => {
  const fixed = {
    v: 1 as const,
    requestId: 'r1',
    correlationId: 'c"1',
    runner: 'api',
    deployment: '1',
    owner: 'i1',
    startedAt: 1000,
  };
  const head = outcomeHead(fixed);
  assert.deepEqual(decode(encodeRunning(head, 1500)), { ...fixed, status: 'RUNNING', updatedAt: 1500 });
  const noCorrelation = outcomeHead({ ...fixed, correlationId: undefined });
  assert.equal('correlationId' in decode(encodeRunning(noCorrelation, 1500)), false);
  const error = { code: 'X', message: 'm\n"q"', http: 409 };
  const results = [
    { outcome: 'SUCCESS' as const, http: 200, response: { a: [1, 'b'] } },
    { outcome: 'SUCCESS' as const, http: 204 },
    { outcome: 'FAIL' as const, http: 409, error },
  ];
  for (const result of results) {
    const full = (): OutcomeValue => ({ ...fixed, status: 'DONE', updatedAt: 2000, ...result });
    assert.deepEqual(decode(encodeDone(head, result, 2000, 1024, full)), full());
  }
  const big = { outcome: 'SUCCESS' as const, http: 200, response: { big: 'x'.repeat(5000) } };
  const full = (): OutcomeValue => ({ ...fixed, status: 'DONE', updatedAt: 2000, ...big });
  const bytes = encodeDone(head, big, 2000, 1024, full);
  assert.deepEqual(bytes, encodeOutcome(full(), 1024));
  assert.equal(decode(bytes).response, undefined);
});
