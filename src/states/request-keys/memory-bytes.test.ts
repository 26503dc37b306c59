import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MemoryKeyStore } from './memory.js';

/**
 * A row completed twice by its owner (two retries answered from one run's status at once:
 * request/idempotency-key.ts answerFromRun stores each replay with the first claim's owner).
 */
test('memory request keys: a response stored again over the same row counts its bytes once', async () => {
  const s = new MemoryKeyStore({ maxBytes: 10 });
  const stored = { status: 201, headers: {}, body: Buffer.alloc(8), omitted: false };
  const c = await s.claim('a', 'fp', 0, 1000, { scope: 'q', max: 10 });
  assert.equal(c.kind, 'claimed');
  const owner = c.kind === 'claimed' ? c.owner : '';
  assert.equal(await s.complete('a', owner, stored, 5000), true);
  assert.equal(await s.complete('a', owner, stored, 5000), true);
  // 8 bytes held, within maxBytes: the stored response stays
  assert.equal((await s.claim('a', 'fp', 1, 1001)).kind, 'done');
  // and the bytes of the row go with it: a new 8-byte body fits after the row expired
  const b = await s.claim('b', 'fp', 6000, 7000);
  assert.equal((await s.claim('a', 'fp', 6000, 7000)).kind, 'claimed');
  await s.complete('b', b.kind === 'claimed' ? b.owner : '', stored, 9000);
  assert.equal((await s.claim('b', 'fp', 6001, 7001)).kind, 'done');
});
