import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CursorCodec } from './cursor.js';

test('a token round-trips its position on the same path and caller', () => {
  const c = new CursorCodec('0123456789abcdef-key');
  const t = c.encode('/feed', 'alice', { previous: { page: 'x/y', n: 3 }, index: 7, end: false });
  assert.deepEqual(c.decode('/feed', 'alice', t), { previous: { page: 'x/y', n: 3 }, index: 7, end: false });
  const first = c.encode('/feed', 'alice', { index: 0, end: false });
  assert.deepEqual(c.decode('/feed', 'alice', first), { index: 0, end: false });
  const end = c.encode('/feed', 'alice', { previous: 5, index: -1, end: true });
  assert.deepEqual(c.decode('/feed', 'alice', end), { previous: 5, index: -1, end: true });
});

test('a token is refused on another path, for another caller, with another key, or tampered', () => {
  const c = new CursorCodec('0123456789abcdef-key');
  const t = c.encode('/feed', 'alice', { previous: 10, index: 2, end: false });
  const bad = (fn: () => unknown) => assert.throws(fn, (e: { code?: string }) => e.code === 'INVALID_CURSOR');
  bad(() => c.decode('/other', 'alice', t));
  bad(() => c.decode('/feed', 'bob', t));
  bad(() => new CursorCodec('another-key-of-16+').decode('/feed', 'alice', t));
  // Change the body but keep the signature: the body says previous 99 now.
  const [, sig] = t.split('.');
  const forged = Buffer.from(JSON.stringify({ i: 2, p: 99 })).toString('base64url') + '.' + sig;
  bad(() => c.decode('/feed', 'alice', forged));
  bad(() => c.decode('/feed', 'alice', 'garbage'));
  bad(() => c.decode('/feed', 'alice', ''));
  bad(() => c.decode('/feed', 'alice', 'a'.repeat(20_000)));
});

test('without a configured key each codec signs with its own random key', () => {
  const a = new CursorCodec();
  const b = new CursorCodec();
  const t = a.encode('/p', 'x', { index: 1, end: false });
  assert.equal(a.decode('/p', 'x', t).index, 1);
  assert.throws(() => b.decode('/p', 'x', t));
});
