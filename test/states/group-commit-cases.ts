import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GroupCommitState, groupCommit } from '../../src/states/group-commit.js';
import type { State } from '../../src/states/state.js';

/**
 * What group commit (src/states/group-commit.ts) must show on a real store, beyond the contract
 * suite (which every store also passes through it): concurrent writes share transactions, each
 * write still gets its own answer, and a write is committed when its promise resolves.
 * `open(table)` returns an initialised store with writeBatch; `reader(table)` reads the same
 * table through another connection.
 */
export function groupCommitCases(
  name: string,
  open: (table: string) => Promise<State>,
  reader: (table: string) => Promise<State>,
): void {
  const table = () => `gc_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;

  test(`${name}: concurrent writes share transactions, each committed when it resolves`, async () => {
    const t = table();
    const base = await open(t);
    const other = await reader(t);
    const g = groupCommit(base) as GroupCommitState;
    assert.ok(g instanceof GroupCommitState);
    try {
      const n = 200;
      const created = await Promise.all(Array.from({ length: n }, (_, i) => g.create(`r${i}`, { i, step: 0 })));
      assert.deepEqual(
        created.map((r) => r.version),
        Array.from({ length: n }, () => 1),
      );
      assert.ok(g.stats.batches <= 2, `200 creates of one tick in ${g.stats.batches} transaction(s)`);
      // every run moves on as soon as its own write is answered, and the write is visible to another connection
      await Promise.all(
        Array.from({ length: n }, async (_, i) => {
          let v = 1;
          for (let s = 1; s <= 3; s++) {
            v = (await g.update(`r${i}`, { step: s }, { expectedVersion: v })).version;
            const seen = await other.get(`r${i}`);
            assert.equal(seen?.version, v, 'committed before it resolved');
            assert.equal(seen?.data['step'], s);
          }
        }),
      );
      assert.equal(g.stats.writes, n * 4);
      assert.ok(g.stats.batches < n, `${n * 4} writes in ${g.stats.batches} transactions`);
      const r = await g.update('r7', { extra: true }, { expectedVersion: 4 });
      assert.deepEqual(r.data, { i: 7, step: 3, extra: true }, 'update() gives the merged record back');
      assert.deepEqual((await g.patch('r7', { more: 1 }, { expectedVersion: 5 })).version, 6);
    } finally {
      await other.close();
      await g.close();
    }
  });

  test(`${name}: in one batch, each write gets its own answer and only failing ones fail`, async () => {
    const t = table();
    const g = groupCommit(await open(t));
    try {
      await g.create('taken', { a: 1 });
      await g.create('ver', { a: 1 });
      const results = await Promise.allSettled([
        g.create('taken', { a: 2 }),
        g.create('fresh', { a: 1 }),
        g.update('missing', { a: 1 }),
        g.update('ver', { b: 2 }, { expectedVersion: 9 }),
        g.set('taken', { c: 3 }, { expectedVersion: 1 }),
        g.upsert('up', { u: 1 }),
        g.upsert('nope', { u: 1 }, { expectedVersion: 1 }),
        g.create('', { bad: 'id' }),
        g.create('big', { s: 'x'.repeat(1024 * 1024 + 10) }),
      ]);
      const codes = results.map((r) =>
        r.status === 'fulfilled' ? `v${r.value.version}` : (r.reason as { code: string }).code,
      );
      assert.deepEqual(codes, [
        'RECORD_EXISTS',
        'v1',
        'RECORD_NOT_FOUND',
        'STALE_VERSION',
        'v2',
        'v1',
        'STALE_VERSION',
        'VALIDATION_FAILED',
        'PAYLOAD_TOO_LARGE',
      ]);
      assert.deepEqual((await g.get('taken'))?.data, { c: 3 });
      assert.deepEqual((await g.get('ver'))?.data, { a: 1 }, 'a stale update changed nothing');
      assert.equal(await g.get('missing'), undefined);
      assert.equal(await g.get('nope'), undefined);
      assert.deepEqual((await g.upsert('up', { u: 2 })).version, 2);
    } finally {
      await g.close();
    }
  });

  test(`${name}: a patch key that would reach a prototype is not stored`, async () => {
    const g = groupCommit(await open(table()));
    try {
      await g.create('p', { a: 1 });
      await g.update('p', JSON.parse('{"__proto__": {"x": 1}, "b": 2}') as Record<string, unknown>);
      assert.deepEqual((await g.get('p'))?.data, { a: 1, b: 2 });
    } finally {
      await g.close();
    }
  });
}
