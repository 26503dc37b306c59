import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { IdempotencyLimits } from '../../src/states/idempotency.js';
import type { State } from '../../src/states/state.js';

/**
 * Issue 9, item 6, for one kind of state: the idempotency table kept a full copy of every
 * record written, for 24 h (30 identical 1 MB PATCHes added 30 MB). A key row must now be small
 * and of constant size, redelivery must still apply the effect once, and the table must be
 * pruned in bounded batches and bounded in rows. Run by idempotency-table-bounds.test.ts (memory,
 * sqlite) and idempotency-table-bounds.int.test.ts (postgres).
 */

/** How a suite reaches one kind of state. */
export interface BoundsTarget {
  /** a state over `table` (the same table for the same name), initialised */
  open(table: string, idempotency?: Partial<IdempotencyLimits>): Promise<State>;
  /** every row of the key table of `state`, as stored (all columns) */
  keyRows(state: State, table: string): Promise<unknown[]>;
  /** true when a second state over the same table sees the first one's keys (not memory) */
  shared: boolean;
}

const MB_TEXT = 'x'.repeat(1024 * 1024 - 64);

/** Bytes of the key table: every column of every row, as JSON text. */
async function keyBytes(target: BoundsTarget, state: State, table: string): Promise<{ rows: number; bytes: number }> {
  const rows = await target.keyRows(state, table);
  return { rows: rows.length, bytes: rows.reduce<number>((n, r) => n + JSON.stringify(r).length, 0) };
}

/** The key rows once they reach `expected` (or after 5 s), and still after a short pause. */
async function settledRows(target: BoundsTarget, state: State, table: string, expected: number): Promise<number> {
  const deadline = Date.now() + 5000;
  let rows = (await keyBytes(target, state, table)).rows;
  while (rows !== expected && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 10));
    rows = (await keyBytes(target, state, table)).rows;
  }
  await new Promise((r) => setTimeout(r, 50));
  return (await keyBytes(target, state, table)).rows;
}

/** Register the tests for one kind of state; `unique()` names a fresh table. */
export function idempotencyBoundsSuite(kind: string, target: BoundsTarget, unique: () => string): void {
  test(`${kind}: 30 identical 1 MB PATCHes store a small key row each, the same as for a tiny record`, async () => {
    const big = unique();
    const small = unique();
    const sb = await target.open(big);
    const ss = await target.open(small);
    try {
      await sb.create('doc', { blob: '' });
      await ss.create('doc', { blob: '' });
      // 30 saga runs each patching the same record with the same 1 MB (each run has its own key)
      for (let i = 0; i < 30; i++) {
        await sb.update('doc', { blob: MB_TEXT }, { idempotencyKey: `run-${String(i).padStart(4, '0')}:patch` });
        await ss.update('doc', { blob: 'x' }, { idempotencyKey: `run-${String(i).padStart(4, '0')}:patch` });
      }
      const b = await keyBytes(target, sb, big);
      const s = await keyBytes(target, ss, small);
      assert.equal(b.rows, 30);
      assert.ok(b.bytes / b.rows < 256, `a key row holds ${Math.round(b.bytes / b.rows)} bytes`);
      // constant regardless of the record's size (the hash has one length; timestamps may differ by a digit)
      assert.ok(Math.abs(b.bytes - s.bytes) <= 30 * 4, `1 MB records: ${b.bytes} bytes, tiny ones: ${s.bytes}`);

      // redelivery of every key: nothing applied again
      const last = await sb.get('doc');
      assert.equal(last?.version, 31);
      for (let i = 0; i < 30; i++) {
        const again = await sb.update(
          'doc',
          { blob: 'changed' },
          { idempotencyKey: `run-${String(i).padStart(4, '0')}:patch` },
        );
        // the last write is still what the record holds: its answer is the record itself
        if (i === 29) assert.deepEqual(again, last);
        else assert.deepEqual(again, { id: 'doc', version: i + 2, data: {} });
      }
      assert.deepEqual(await sb.get('doc'), last, 'nothing lost, nothing applied twice');
      assert.equal((await keyBytes(target, sb, big)).rows, 30);
    } finally {
      await sb.close();
      await ss.close();
    }
  });

  test(`${kind}: the key table is bounded: the oldest keys go first, the newest still protect`, async () => {
    const table = unique();
    const limits = { maxKeys: 50, pruneEvery: 10, pruneBatch: 20 };
    const s = await target.open(table, limits);
    try {
      for (let i = 0; i < 200; i++) await s.create(`r${i}`, { i }, { idempotencyKey: `k${i}` });
      const { rows } = await keyBytes(target, s, table);
      // pruning runs every pruneEvery keyed writes: between two passes at most that many more
      assert.ok(rows <= limits.maxKeys + limits.pruneEvery, `${rows} keys kept`);
      assert.ok(rows >= limits.maxKeys - limits.pruneEvery, `${rows} keys kept: the bound removed too many`);
      // the newest keys are kept: a redelivery of one creates nothing
      const again = await s.create('new-id', { i: 199 }, { idempotencyKey: 'k199' });
      assert.deepEqual(again, { id: 'r199', version: 1, data: { i: 199 } });
      assert.equal(await s.get('new-id'), undefined);
      assert.equal((await s.list({ limit: 1000 })).list.length, 200, 'records are never pruned, only keys');
    } finally {
      await s.close();
    }
  });

  test(`${kind}: expired keys are pruned in bounded batches, never all at once`, async () => {
    const table = unique();
    const batch = { pruneEvery: 10, pruneBatch: 20 };
    let s = await target.open(table, { ...batch, retentionMs: 60_000 });
    for (let i = 0; i < 100; i++) await s.create(`r${i}`, { i }, { idempotencyKey: `old${i}` });
    assert.equal((await keyBytes(target, s, table)).rows, 100);
    if (target.shared) {
      // a second process with a short retention: its start prunes one batch, and so does every
      // pruneEvery-th keyed write after that
      await s.close();
      await new Promise((r) => setTimeout(r, 20));
      s = await target.open(table, { ...batch, retentionMs: 5 });
      assert.equal((await keyBytes(target, s, table)).rows, 80, 'one batch at start');
    } else {
      // memory: the same instance, once the keys are older than its retention
      (s as unknown as { idemLimits: { retentionMs: number } }).idemLimits.retentionMs = 5;
      await new Promise((r) => setTimeout(r, 20));
    }
    try {
      const before = (await keyBytes(target, s, table)).rows;
      for (let i = 0; i < 10; i++) await s.create(`n${i}`, { i }, { idempotencyKey: `new${i}` });
      // the SQL states prune after the write that reached pruneEvery has answered (a write never
      // waits for a prune), so the pass may still be in flight here: wait for it, then hold still
      const expected = before + 10 - batch.pruneBatch;
      const after = await settledRows(target, s, table, expected);
      assert.equal(after, expected, 'one pass removes exactly one batch');
      // and pruning keeps going until the expired keys are gone
      for (let i = 10; i < 200; i++) await s.create(`n${i}`, { i }, { idempotencyKey: `new${i}` });
      const rows = (await target.keyRows(s, table)) as Record<string, unknown>[];
      assert.ok(!rows.some((r) => String(r['key']).startsWith('old')), 'every expired key is gone');
    } finally {
      await s.close();
    }
  });
}
