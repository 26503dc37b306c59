import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MASK, MAX_TRACED_STEPS, snapshotOf, TraceBus, type RunRecord } from './trace.js';
import { compileMasker } from './sensitive.js';

const START = { requestId: 'r1', runner: 'main', sagaId: 's', method: 'GET', path: '/x' };

test('nobody listens: begin answers undefined (the engine then does no trace work)', () => {
  const bus = new TraceBus();
  assert.equal(bus.active, false);
  assert.equal(bus.begin(START), undefined);
  const stop = bus.listen(() => undefined);
  assert.equal(bus.active, true);
  assert.notEqual(bus.begin(START), undefined);
  stop();
  assert.equal(bus.begin(START), undefined);
});

test('a traced run reaches every listener with its steps, outcome and snapshots', () => {
  const bus = new TraceBus(64);
  const seen: RunRecord[] = [];
  bus.listen((r) => seen.push(r));
  const t = bus.begin(START)!;
  t.step({ step: 'start', kind: 'start', status: 'SUCCESS', ms: 0.1 }, { parameters: { a: 1, password: 'hunter2' } });
  t.end({ outcome: 'FAIL', http: 400, error: { code: 'X', message: 'm' }, runId: 'run-1' });
  assert.equal(seen.length, 1);
  const run = seen[0]!;
  assert.equal(run.outcome, 'FAIL');
  assert.equal(run.http, 400);
  assert.equal(run.runId, 'run-1');
  assert.equal(run.steps[0]!.payload, `{"parameters":{"a":1,"password":"${MASK}"}}`);
  assert.ok(!JSON.stringify(run).includes('hunter2'));
});

test('under load at most `perSecond` runs are traced; the rest run untraced and are counted', () => {
  const bus = new TraceBus(64, 5);
  bus.listen(() => undefined);
  const traced = Array.from({ length: 20 }, () => bus.begin(START)).filter((t) => t !== undefined);
  assert.equal(traced.length, 5);
  assert.equal(bus.skipped, 15);
});

test('a run longer than MAX_TRACED_STEPS keeps its first steps and counts the others', () => {
  const bus = new TraceBus(16);
  let run: RunRecord | undefined;
  bus.listen((r) => (run = r));
  const t = bus.begin(START)!;
  for (let i = 0; i < MAX_TRACED_STEPS + 7; i++)
    t.step({ step: `s${i}`, kind: 'transform', status: 'SUCCESS', ms: 0 }, {});
  t.end({ outcome: 'SUCCESS', http: 200 });
  assert.equal(run!.steps.length, MAX_TRACED_STEPS);
  assert.equal(run!.droppedSteps, 7);
});

test('snapshots: sensitive keys masked at any depth, cut at the byte budget without splitting a character', () => {
  const text = snapshotOf({ a: { apiKey: 'k', Authorization: 'Bearer x', nested: [{ client_secret: 's' }] } }, 1000);
  assert.deepEqual(JSON.parse(text), { a: { apiKey: MASK, Authorization: MASK, nested: [{ client_secret: MASK }] } });
  const long = snapshotOf({ text: 'é'.repeat(500) }, 101);
  assert.ok(Buffer.byteLength(long) <= 101, `${Buffer.byteLength(long)} bytes`);
  assert.ok(long.endsWith('…'));
  assert.ok(!long.includes('\uFFFD'));
  assert.equal(snapshotOf({ compass: 1, passenger: 2 }, 100), '{"compass":1,"passenger":2}');
});

test('snapshots: short parts as words (pw, pin, otp, ssn, ...), JWTs and card numbers under any key, extra patterns', () => {
  const payload = {
    user: { pw: 'p', userPin: '1234', otp: '999999', sessionId: 's', SSN: '078-05-1120', cvv: '123' },
    note: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.c2ln',
    paidWith: '4111 1111 1111 1111',
    list: ['4111111111111111', 'ok'],
    nickname: 'grace',
    at: 1732700000000,
  };
  assert.deepEqual(JSON.parse(snapshotOf(payload, 4096)), {
    user: { pw: MASK, userPin: MASK, otp: MASK, sessionId: MASK, SSN: MASK, cvv: MASK },
    note: MASK,
    paidWith: MASK,
    list: [MASK, 'ok'],
    nickname: 'grace',
    at: 1732700000000,
  });
  const own = JSON.parse(snapshotOf(payload, 4096, compileMasker(['nickname'])));
  assert.equal(own.nickname, MASK);
  // Through a TraceBus, as the runner traces.
  const bus = new TraceBus(4096, 50, compileMasker(['nickname']));
  let run: RunRecord | undefined;
  bus.listen((r) => (run = r));
  const t = bus.begin(START)!;
  t.step({ step: 's', kind: 'transform', status: 'SUCCESS', ms: 0 }, payload);
  t.end({ outcome: 'SUCCESS', http: 200 });
  assert.equal(JSON.parse(run!.steps[0]!.payload!).nickname, MASK);
});

test('snapshots: what lies past the byte budget is not serialised, and the kept part is exact', () => {
  let read = 0;
  const later = {
    get deep() {
      read++;
      return 'x';
    },
  };
  const payload = { list: Array.from({ length: 50 }, (_, i) => ({ n: i, text: 'abcdefghij'.repeat(10) })), later };
  const text = snapshotOf(payload, 2048);
  assert.equal(read, 0, 'the part past the budget was not visited');
  assert.ok(Buffer.byteLength(text) <= 2048 && text.endsWith('…'));
  assert.equal(
    text.slice(0, -1),
    JSON.stringify(payload).slice(0, text.length - 1),
    'the kept prefix is the JSON as it is',
  );
  const arrays = snapshotOf({ a: [[1, 2], ['é'.repeat(40)], 3] }, 1000);
  assert.deepEqual(JSON.parse(arrays), { a: [[1, 2], ['é'.repeat(40)], 3] }, 'within the budget: whole');
});

test('a listener that throws never reaches the traced run', () => {
  const bus = new TraceBus();
  let other = 0;
  bus.listen(() => {
    throw new Error('boom');
  });
  bus.listen(() => other++);
  bus.begin(START)!.end({ outcome: 'SUCCESS', http: 200 });
  assert.equal(other, 1);
});
