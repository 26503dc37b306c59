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

  test(`${name} request keys: a key bound to its run outlives its lock; taken over only by a claim on its owner`, () =>
    withStore(async (s) => {
      const first = await s.claim('k', 'fp', 1000, 2000, undefined, { runId: 'run-1', expiresAt: 50_000 });
      assert.equal(first.kind, 'claimed');
      const owner = first.kind === 'claimed' ? first.owner : '';
      const running = { kind: 'running', runId: 'run-1', owner, lockUntil: 2000 };
      assert.deepEqual(await s.claim('k', 'fp', 1500, 3000), running);
      // past the lock the row is not free: the gateway decides from the run's status
      assert.deepEqual(await s.claim('k', 'fp', 2500, 3500, undefined, { runId: 'run-2', expiresAt: 50_000 }), running);
      assert.deepEqual(await s.claim('k', 'other', 2500, 3500), { kind: 'mismatch' });
      // taken over: only by naming the current owner, once
      assert.equal(await s.takeOver('k', 'not-the-owner', 6000, { runId: 'run-2', expiresAt: 50_000 }), undefined);
      const next = await s.takeOver('k', owner, 6000, { runId: 'run-2', expiresAt: 50_000 });
      assert.equal(typeof next, 'string');
      assert.equal(await s.takeOver('k', owner, 6000, { runId: 'run-3', expiresAt: 50_000 }), undefined);
      assert.deepEqual(await s.claim('k', 'fp', 2600, 3600), {
        kind: 'running',
        runId: 'run-2',
        owner: next,
        lockUntil: 6000,
      });
      // the old owner can no longer store; the new one can, and a finished row is not taken over
      assert.equal(await s.complete('k', owner, response('late'), 60_000), false);
      assert.equal(await s.complete('k', next!, response('{"n":2}'), 60_000), true);
      assert.equal(await s.takeOver('k', next!, 9000, { runId: 'run-4', expiresAt: 50_000 }), undefined);
      const done = await s.claim('k', 'fp', 2700, 3700);
      assert.equal(done.kind === 'done' && done.response.body.toString(), '{"n":2}');
      // past its retention a bound row is free like any other
      const late = await s.claim('b', 'fp', 0, 100, undefined, { runId: 'r', expiresAt: 1000 });
      assert.equal(late.kind, 'claimed');
      assert.equal((await s.claim('b', 'fp', 1000, 2000)).kind, 'claimed');
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

  test(`${name} request keys: a caller's quota refuses new keys past it, not its own keys nor other callers'`, () =>
    withStore(async (s) => {
      const a = { scope: 'scope-a', max: 3 };
      const b = { scope: 'scope-b', max: 3 };
      const first = await s.claim('a1', 'fp', 0, 1000, a);
      assert.equal(first.kind, 'claimed');
      await s.complete('a1', first.kind === 'claimed' ? first.owner : '', response('{}'), 5000);
      assert.equal((await s.claim('a2', 'fp', 1, 1001, a)).kind, 'claimed');
      assert.equal((await s.claim('a3', 'fp', 2, 1002, a)).kind, 'claimed');
      assert.deepEqual(await s.claim('a4', 'fp', 3, 1003, a), { kind: 'exhausted' });
      // the caller's own keys are still answered: a replay, in use, mismatch
      assert.equal((await s.claim('a1', 'fp', 3, 1003, a)).kind, 'done');
      assert.deepEqual(await s.claim('a2', 'fp', 3, 1003, a), { kind: 'running' });
      assert.deepEqual(await s.claim('a3', 'other', 3, 1003, a), { kind: 'mismatch' });
      // another caller is not affected, nor a claim without a quota
      assert.equal((await s.claim('b1', 'fp', 3, 1003, b)).kind, 'claimed');
      assert.equal((await s.claim('n1', 'fp', 3, 1003)).kind, 'claimed');
      // a released key and an expired lock free a place
      const b2 = await s.claim('b2', 'fp', 4, 1004, b);
      assert.equal((await s.claim('b3', 'fp', 4, 1004, b)).kind, 'claimed');
      assert.deepEqual(await s.claim('b4', 'fp', 4, 1004, b), { kind: 'exhausted' });
      await s.release('b2', b2.kind === 'claimed' ? b2.owner : '');
      assert.equal((await s.claim('b4', 'fp', 5, 1005, b)).kind, 'claimed');
      assert.equal((await s.claim('a4', 'fp', 1001, 2000, a)).kind, 'claimed', 'the lock of a2 passed at 1001');
      assert.deepEqual(await s.claim('a5', 'fp', 1001, 2000, a), { kind: 'exhausted' });
      // past the retention of a1 and the locks of a3 and a4, the scope is empty again
      assert.equal((await s.claim('a5', 'fp', 5000, 6000, a)).kind, 'claimed');
      assert.equal((await s.claim('a6', 'fp', 5000, 6000, a)).kind, 'claimed');
    }));
}
