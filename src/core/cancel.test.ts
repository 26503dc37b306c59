import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Cancel } from './cancel.js';

test('listeners run once, in order, and a removed one never runs', () => {
  const c = new Cancel();
  const seen: string[] = [];
  c.onAbort(() => seen.push('a'));
  const off = c.onAbort(() => seen.push('b'));
  c.onAbort(() => seen.push('c'));
  off();
  c.abort('why');
  c.abort('again');
  assert.deepEqual(seen, ['a', 'c']);
  assert.equal(c.aborted, true);
  assert.equal(c.reason, 'why');
});

test('a listener added after the abort runs at once', () => {
  const c = new Cancel();
  c.abort();
  let ran = 0;
  c.onAbort(() => ran++);
  assert.equal(ran, 1);
  assert.ok(c.reason instanceof DOMException, 'the default reason is an AbortError, as AbortController gives');
});

test('the signal follows the cancellation, whether it is read before or after the abort', () => {
  const before = new Cancel();
  const signal = before.signal;
  assert.equal(signal.aborted, false);
  assert.equal(before.signal, signal, 'one signal per cancellation');
  let heard = 0;
  signal.addEventListener('abort', () => heard++);
  before.abort('r1');
  assert.equal(signal.aborted, true);
  assert.equal(signal.reason, 'r1');
  assert.equal(heard, 1);

  const after = new Cancel();
  after.abort('r2');
  assert.equal(after.signal.aborted, true);
  assert.equal(after.signal.reason, 'r2');
});

test('fromSignal follows an AbortSignal, already aborted or later', () => {
  const ac = new AbortController();
  const c = Cancel.fromSignal(ac.signal);
  assert.equal(c.aborted, false);
  ac.abort('later');
  assert.equal(c.aborted, true);
  assert.equal(c.reason, 'later');
  assert.equal(Cancel.fromSignal(AbortSignal.abort('now')).reason, 'now');
});
