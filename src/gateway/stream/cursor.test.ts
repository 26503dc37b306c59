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
  const [, b, m] = t.split('.');
  const forged = Buffer.from(JSON.stringify({ p: 99 })).toString('base64url') + '.' + b + '.' + m;
  bad(() => c.decode('/feed', 'alice', forged));
  bad(() => c.decode('/feed', 'alice', 'garbage'));
  bad(() => c.decode('/feed', 'alice', ''));
  bad(() => c.decode('/feed', 'alice', 'a'.repeat(20_000)));
  // Another index or the end marker under the same MAC.
  const [a0, , m0] = t.split('.');
  bad(() => c.decode('/feed', 'alice', `${a0}.3.${m0}`));
  bad(() => c.decode('/feed', 'alice', `${a0}.e.${m0}`));
  bad(() => c.decode('/feed', 'alice', `${a0}.02.${m0}`));
});

test('without a configured key each codec signs with its own random key', () => {
  const a = new CursorCodec();
  const b = new CursorCodec();
  const t = a.encode('/p', 'x', { index: 1, end: false });
  assert.equal(a.decode('/p', 'x', t).index, 1);
  assert.throws(() => b.decode('/p', 'x', t));
});

test('batch tokens: every index of a large batch verifies, also across HKDF chunks, and each only for itself', () => {
  const c = new CursorCodec('0123456789abcdef-key');
  const batch = c.batch('/p/q', 'apikey:bot', { after: 'z' }, 1200);
  const tokens = Array.from({ length: 1200 }, (_, i) => batch.entry(i));
  assert.equal(new Set(tokens.map((t) => t.split('.')[2])).size, 1200, 'all tags differ');
  for (const i of [0, 1, 499, 500, 501, 999, 1000, 1199]) {
    assert.deepEqual(c.decode('/p/q', 'apikey:bot', tokens[i]!), { previous: { after: 'z' }, index: i, end: false });
    const [a, , m] = tokens[i]!.split('.');
    assert.throws(() => c.decode('/p/q', 'apikey:bot', `${a}.${i + 1}.${m}`));
  }
  // A one-off encode gives the same token as the batch signer.
  assert.equal(c.encode('/p/q', 'apikey:bot', { previous: { after: 'z' }, index: 777, end: false }), tokens[777]);
  assert.equal(c.decode('/p/q', 'apikey:bot', batch.end()).end, true);
  // Small batches computed lazily still cover any index asked for.
  assert.equal(c.decode('/x', 'y', c.batch('/x', 'y', undefined, 1).entry(42)).index, 42);
});

test('only the canonical spelling of a tag is accepted (the spare bits of its last character count)', () => {
  const c = new CursorCodec('0123456789abcdef-key');
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  for (let index = 0; index < 20; index++) {
    const t = c.encode('/feed', 'alice', { previous: index, index, end: false });
    const last = alphabet.indexOf(t.at(-1)!);
    // same top two bits (the data of the tag's last 2 bits), other spare bits: the same bytes
    const twin = alphabet[(last & 0b110000) | ((last + 1) & 0b001111)]!;
    const spelled = t.slice(0, -1) + twin;
    assert.deepEqual(
      Buffer.from(spelled.split('.')[2]!, 'base64url'),
      Buffer.from(t.split('.')[2]!, 'base64url'),
      'the twin decodes to the same tag bytes',
    );
    assert.throws(
      () => c.decode('/feed', 'alice', spelled),
      (e: { code?: string }) => e.code === 'INVALID_CURSOR',
    );
    assert.equal(c.decode('/feed', 'alice', t).index, index);
  }
});

test('a start token names the start of a batch: its previous, no entry delivered; bound like the others', () => {
  const c = new CursorCodec('a-key-of-16-chars-at-least');
  const t = c.batch('/feed', 'anon', { at: 3 }).start();
  assert.match(t, /\.s\./);
  assert.deepEqual(c.decode('/feed', 'anon', t), { previous: { at: 3 }, index: -1, end: false });
  assert.equal(c.encode('/feed', 'anon', { previous: { at: 3 }, index: -1, end: false }), t);
  assert.throws(() => c.decode('/other', 'anon', t), /not valid/);
  assert.throws(() => c.decode('/feed', 'jwt:x', t), /not valid/);
  // the start tag is not the end tag: one cannot be turned into the other
  const end = c.batch('/feed', 'anon', { at: 3 }).end();
  assert.throws(() => c.decode('/feed', 'anon', t.replace('.s.', '.e.')), /not valid/);
  assert.throws(() => c.decode('/feed', 'anon', end.replace('.e.', '.s.')), /not valid/);
});

test('a remembered token decodes to a fresh position each time, and only where it was verified', () => {
  const c = new CursorCodec('0123456789abcdef-key');
  const t = c.encode('/feed', 'alice', { previous: { page: 'x', n: [1, 2] }, index: 4, end: false });
  const one = c.decode('/feed', 'alice', t);
  // the caller owns what it got: changing it does not change what the next request decodes
  (one.previous as { n: number[] }).n.push(3);
  assert.deepEqual(c.decode('/feed', 'alice', t), { previous: { page: 'x', n: [1, 2] }, index: 4, end: false });
  const bad = (fn: () => unknown) => assert.throws(fn, (e: { code?: string }) => e.code === 'INVALID_CURSOR');
  // verified on /feed for alice: still refused on another path, for another caller, or changed
  bad(() => c.decode('/other', 'alice', t));
  bad(() => c.decode('/feed', 'bob', t));
  bad(() => c.decode('/feed', 'alice', t.slice(0, -1) + (t.endsWith('A') ? 'B' : 'A')));
  // a token refused once stays refused (failures are not remembered as positions)
  bad(() => c.decode('/feed', 'bob', t));
  // more tokens than are remembered: the first ones are verified again, and still decode
  const many = Array.from({ length: 1100 }, (_, i) =>
    c.encode('/feed', 'alice', { previous: i, index: 0, end: false }),
  );
  for (const token of many) c.decode('/feed', 'alice', token);
  assert.deepEqual(c.decode('/feed', 'alice', many[0]!), { previous: 0, index: 0, end: false });
});

test('a remembered token is not accepted for another path and caller whose memo key spells the same', () => {
  // The memo key joins path, caller and token with "\n"; a path may hold a newline (%0A in a
  // path parameter) and an offset is any text. Alice's token, verified on "/feed\nanon", must not
  // be taken from an anonymous caller on "/feed" who sends "jwt:alice\n" + the token.
  const c = new CursorCodec('0123456789abcdef-key');
  const t = c.encode('/feed\nanon', 'jwt:alice', { previous: { secret: 'alice-page' }, index: 0, end: false });
  c.decode('/feed\nanon', 'jwt:alice', t); // verified, remembered
  assert.throws(
    () => c.decode('/feed', 'anon', `jwt:alice\n${t}`),
    (e: { code?: string }) => e.code === 'INVALID_CURSOR',
  );
});
