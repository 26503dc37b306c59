import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RequestKeyStore, StoredResponse } from '../../src/states/request-keys/index.js';

/**
 * The contract of a request key store (src/states/request-keys/store.ts), run by every
 * implementation: memory and SQLite in the unit suite, PostgreSQL against the real server.
 * `make` returns a fresh, initialised store over a table of its own.
 */
export function runRequestKeyContract(name: string, make: () => Promise<RequestKeyStore>): void {
  const response = (text: string, omitted = false): StoredResponse => ({
    status: 201,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: Buffer.from(text),
    omitted,
  });

  async function withStore(fn: (s: RequestKeyStore) => Promise<void>): Promise<void> {
    const s = await make();
    try {
      await fn(s);
    } finally {
      await s.close();
    }
  }

  test(`${name} request keys: claim, in use, mismatch, replay of the stored response`, () =>
    withStore(async (s) => {
      const first = await s.claim('k1', 'fp-a', 1000, 5000);
      assert.equal(first.kind, 'claimed');
      assert.deepEqual(await s.claim('k1', 'fp-a', 1001, 5001), { kind: 'running' });
      assert.deepEqual(await s.claim('k1', 'fp-b', 1001, 5001), { kind: 'mismatch' });
      const owner = first.kind === 'claimed' ? first.owner : '';
      assert.equal(await s.complete('k1', 'someone-else', response('{"x":1}'), 90_000), false);
      assert.equal(await s.complete('k1', owner, response('{"id":"o1"}'), 90_000), true);
      const again = await s.claim('k1', 'fp-a', 2000, 6000);
      assert.equal(again.kind, 'done');
      if (again.kind === 'done') {
        assert.equal(again.response.status, 201);
        assert.deepEqual(again.response.headers, { 'content-type': 'application/json; charset=utf-8' });
        assert.equal(again.response.body.toString(), '{"id":"o1"}');
        assert.equal(again.response.omitted, false);
      }
      assert.deepEqual(await s.claim('k1', 'fp-b', 2000, 6000), { kind: 'mismatch' });
      // another id is another key
      assert.equal((await s.claim('k2', 'fp-a', 2000, 6000)).kind, 'claimed');
    }));

  test(`${name} request keys: an omitted body and binary bytes come back as stored`, () =>
    withStore(async (s) => {
      const c = await s.claim('big', 'fp', 0, 1000);
      assert.equal(c.kind, 'claimed');
      await s.complete('big', c.kind === 'claimed' ? c.owner : '', { ...response(''), omitted: true }, 10_000);
      const r = await s.claim('big', 'fp', 1, 1001);
      assert.equal(r.kind === 'done' && r.response.omitted, true);
      const b = await s.claim('bin', 'fp', 0, 1000);
      const bytes = Buffer.from([0, 255, 10, 13, 0x80]);
      await s.complete('bin', b.kind === 'claimed' ? b.owner : '', { ...response(''), body: bytes }, 10_000);
      const rb = await s.claim('bin', 'fp', 1, 1001);
      assert.deepEqual(rb.kind === 'done' && [...rb.response.body], [...bytes]);
    }));

  test(`${name} request keys: a lock that passed frees the key, and the old owner can no longer store`, () =>
    withStore(async (s) => {
      const dead = await s.claim('k', 'fp', 1000, 2000);
      assert.equal(dead.kind, 'claimed');
      assert.deepEqual(await s.claim('k', 'fp', 1999, 3000), { kind: 'running' });
      const next = await s.claim('k', 'fp', 2000, 4000);
      assert.equal(next.kind, 'claimed');
      assert.equal(await s.complete('k', dead.kind === 'claimed' ? dead.owner : '', response('late'), 9000), false);
      assert.deepEqual(await s.claim('k', 'fp', 2500, 4500), { kind: 'running' });
    }));

  test(`${name} request keys: a stored response expires after its retention`, () =>
    withStore(async (s) => {
      const c = await s.claim('k', 'fp-a', 0, 1000);
      await s.complete('k', c.kind === 'claimed' ? c.owner : '', response('{}'), 5000);
      assert.equal((await s.claim('k', 'fp-b', 4999, 6000)).kind, 'mismatch');
      // past the retention the key is free, also for another request
      assert.equal((await s.claim('k', 'fp-b', 5000, 6000)).kind, 'claimed');
    }));

  test(`${name} request keys: release frees the key for its owner only`, () =>
    withStore(async (s) => {
      const c = await s.claim('k', 'fp', 0, 1000);
      await s.release('k', 'not-the-owner');
      assert.deepEqual(await s.claim('k', 'fp', 1, 1001), { kind: 'running' });
      await s.release('k', c.kind === 'claimed' ? c.owner : '');
      assert.equal((await s.claim('k', 'fp', 2, 1002)).kind, 'claimed');
    }));

  test(`${name} request keys: of many claims at once exactly one takes the key`, () =>
    withStore(async (s) => {
      const claims = await Promise.all(Array.from({ length: 12 }, () => s.claim('race', 'fp', 0, 1000)));
      assert.equal(claims.filter((c) => c.kind === 'claimed').length, 1);
      assert.equal(claims.filter((c) => c.kind === 'running').length, 11);
    }));
}
