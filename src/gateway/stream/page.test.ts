import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CursorCodec, MAX_NEXT_JSON } from './cursor.js';
import { endEvent, endToken, lazyEndToken, nextFits, readPage } from './page.js';

/** The stream protocol as page.ts reads it (DESIGN §7); the loop that acts on it is group-loop.test.ts. */

test('a page: the list, continue only when true, next without null, wait as written', () => {
  const page = readPage({ list: [1, { a: 2 }], continue: true, next: { after: 'x' }, wait: '2s' });
  assert.deepEqual(page, { list: [1, { a: 2 }], continue: true, next: { after: 'x' }, wait: '2s' });
  // `continue` must be the boolean true: "true" or 1 end the stream
  assert.equal(readPage({ list: [], continue: 'true' }).continue, false);
  assert.equal(readPage({ list: [], continue: 1 }).continue, false);
  // a null next is no next: the same `previous` again
  assert.equal(readPage({ list: [], continue: true, next: null }).next, undefined);
  // a falsy next is still a next
  assert.equal(readPage({ list: [], continue: true, next: 0 }).next, 0);
});

test('a response that is not an object, or has no list array, is an empty final page', () => {
  for (const response of [undefined, null, 'text', 42, [1, 2], { list: 'not an array' }, { list: { 0: 'a' } }]) {
    const page = readPage(response);
    assert.deepEqual(page.list, [], String(JSON.stringify(response)));
    assert.equal(page.continue, false);
  }
});

test('a next fits when its JSON is at most MAX_NEXT_JSON long', () => {
  // JSON.stringify adds the two quotes of a string
  assert.equal(nextFits('x'.repeat(MAX_NEXT_JSON - 2)), true);
  assert.equal(nextFits('x'.repeat(MAX_NEXT_JSON - 1)), false);
  assert.equal(nextFits({ page: 3 }), true);
});

test('the end token is the final token of the batch: it decodes as the end of that batch', () => {
  const cursors = new CursorCodec('0123456789abcdef-key');
  const token = endToken(cursors, '/feed', 'caller:alice', { after: 7 });
  assert.deepEqual(cursors.decode('/feed', 'caller:alice', token), { previous: { after: 7 }, index: -1, end: true });
  assert.equal(token, cursors.encode('/feed', 'caller:alice', { previous: { after: 7 }, index: -1, end: true }));
  // bound to the path and the caller like every token
  assert.throws(() => cursors.decode('/feed', 'caller:bob', token), { code: 'INVALID_CURSOR' });
  // the first batch (no previous) has its own end token
  const first = endToken(cursors, '/feed', 'caller:alice', undefined);
  assert.deepEqual(cursors.decode('/feed', 'caller:alice', first), { index: -1, end: true });
});

test('the lazy end token is computed once, on first use, for the previous it was made with', () => {
  let batches = 0;
  const cursors = new CursorCodec('0123456789abcdef-key');
  const counting = {
    batch: (...args: Parameters<CursorCodec['batch']>) => {
      batches++;
      return cursors.batch(...args);
    },
  } as unknown as CursorCodec;
  const token = lazyEndToken(counting, '/feed', 'caller:alice', 5);
  assert.equal(batches, 0, 'nothing signed until asked for');
  assert.equal(token(), endToken(cursors, '/feed', 'caller:alice', 5));
  assert.equal(token(), token());
  assert.equal(batches, 1);
});

test('the end event carries the final token and the reason', () => {
  assert.equal(endEvent('A.e.M'), 'event: end\nid: A.e.M\ndata: {"reason":"complete"}\n\n');
});
