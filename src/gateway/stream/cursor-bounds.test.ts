import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, hkdfSync } from 'node:crypto';
import { CursorCodec, MAX_TOKEN_LENGTH } from './cursor.js';

/**
 * The edges of cursor tokens that cursor.test.ts leaves open (found by mutation testing,
 * TESTING.md): replicas sharing `cursorKey`, the size and index bounds, the part count, and bodies
 * that are validly signed but not an object. `sign` follows the format documented in cursor.ts,
 * so that a test can sign a body the codec itself would never produce.
 */

const KEY = '0123456789abcdef-key';
const isInvalid = (e: unknown) =>
  (e as { code?: string }).code === 'INVALID_CURSOR' &&
  (e as { message?: string }).message === 'the stream cursor is not valid here';

/** A token for body `a` (base64url text) and entry `index`, signed as cursor.ts documents. */
function sign(a: string, index: number, path = '/feed', caller = 'alice'): string {
  const k = createHmac('sha256', KEY).update(`v2\n${path}\n${caller}\n${a}`).digest();
  const at = index % 500;
  const tags = Buffer.from(hkdfSync('sha256', k, Buffer.alloc(0), `c${Math.floor(index / 500)}`, 16 * (at + 1)));
  return `${a}.${index}.${tags.subarray(16 * at).toString('base64url')}`;
}
const body = (json: string) => Buffer.from(json).toString('base64url');

test('replicas configured with the same cursorKey accept each other’s tokens', () => {
  const one = new CursorCodec(KEY);
  const other = new CursorCodec(KEY);
  const t = one.encode('/feed', 'alice', { previous: { page: 2 }, index: 4, end: false });
  assert.deepEqual(other.decode('/feed', 'alice', t), { previous: { page: 2 }, index: 4, end: false });
  assert.equal(t, sign(body('{"p":{"page":2}}'), 4), 'the documented format');
  assert.throws(() => new CursorCodec('another-key-0123').decode('/feed', 'alice', t), isInvalid);
});

test('a batch signer serves later indexes after earlier ones, one by one and by jumps', () => {
  const c = new CursorCodec(KEY);
  const b = c.batch('/feed', 'alice', 7, 1);
  for (const i of [0, 1, 2, 3, 9, 4, 499, 500, 501, 1203]) {
    const t = b.entry(i);
    assert.equal(t, sign(body('{"p":7}'), i), `entry ${i}`);
    assert.equal(c.decode('/feed', 'alice', t).index, i);
  }
});

test('token size: MAX_TOKEN_LENGTH is accepted, one character more is refused even when validly signed', () => {
  const c = new CursorCodec(KEY);
  const tokenOf = (n: number) => c.encode('/feed', 'alice', { previous: 'x'.repeat(n), index: 0, end: false });
  let n = Math.floor(((MAX_TOKEN_LENGTH - 30) * 3) / 4) - 8;
  while (tokenOf(n).length < MAX_TOKEN_LENGTH) n++;
  // base64url lengths skip some values; walk to a body whose token is exactly the limit
  const exact = [n, n - 1, n - 2, n + 1].map(tokenOf).find((t) => t.length === MAX_TOKEN_LENGTH);
  assert.ok(exact, 'a token of exactly MAX_TOKEN_LENGTH');
  assert.equal(c.decode('/feed', 'alice', exact).index, 0);
  const over = [n, n + 1, n + 2].map(tokenOf).find((t) => t.length > MAX_TOKEN_LENGTH)!;
  assert.throws(() => c.decode('/feed', 'alice', over), isInvalid);
});

test('index: 10 000 000 is the largest accepted, even when validly signed', () => {
  const c = new CursorCodec(KEY);
  const b = c.batch('/feed', 'alice', undefined);
  assert.equal(c.decode('/feed', 'alice', b.entry(10_000_000)).index, 10_000_000);
  assert.throws(() => c.decode('/feed', 'alice', b.entry(10_000_001)), isInvalid);
});

test('malformed tokens are INVALID_CURSOR, never another error', () => {
  const c = new CursorCodec(KEY);
  const t = c.encode('/feed', 'alice', { previous: 1, index: 3, end: false });
  const [a, b, m] = t.split('.') as [string, string, string];
  for (const bad of [`${t}.x`, `${a}.${b}`, `${a}.${b}.${m.slice(0, 4)}`, `${a}.${b}.${m}AA`, `.${b}.${m}`])
    assert.throws(() => c.decode('/feed', 'alice', bad), isInvalid, bad);
});

test('a validly signed body that is not a JSON object is refused', () => {
  const c = new CursorCodec(KEY);
  // the control: a body the codec would write itself
  assert.deepEqual(c.decode('/feed', 'alice', sign(body('{"p":3}'), 0)), { previous: 3, index: 0, end: false });
  assert.deepEqual(c.decode('/feed', 'alice', sign(body('{}'), 0)), { index: 0, end: false });
  for (const json of ['5', 'null', '[1]', '"p"', 'true', '{'])
    assert.throws(() => c.decode('/feed', 'alice', sign(body(json), 0)), isInvalid, json);
});
