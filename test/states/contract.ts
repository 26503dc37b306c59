import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, test } from 'node:test';
import type { State, StateRecord } from '../../src/states/state.js';

/**
 * The one contract suite every state implementation passes (memory, sqlite, postgres, and any
 * new store). `makeState(table)` returns an initialised state over a fresh table, configured
 * with one named query, `byOwner`, that returns the records whose `data.owner` equals `:owner`
 * as rows holding at least `id` (SQL: `select id, data from <table> where <data.owner> = :owner`;
 * memory: `filter: { owner: ':owner' }`). `options.maxPageBytes`, when given, is the state's
 * byte budget of one list page.
 */

/** Options the suite passes to makeState. */
export interface MakeStateOptions {
  /** the state's `maxPageBytes` */
  maxPageBytes?: number;
}

/** Hooks of the suite. */
export interface ContractOptions {
  /** drop what makeState created (real databases); called once per table after the suite */
  drop?: (table: string) => Promise<void>;
}

/** Register the contract tests for one implementation. */
export function runStateContract(
  name: string,
  makeState: (table: string, options?: MakeStateOptions) => Promise<State>,
  options: ContractOptions = {},
): void {
  describe(`state contract: ${name}`, () => {
    const tables: string[] = [];
    const open: State[] = [];
    const fresh = async (stateOptions?: MakeStateOptions): Promise<State> => {
      const table = `c_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
      tables.push(table);
      const s = await makeState(table, stateOptions);
      open.push(s);
      return s;
    };
    after(async () => {
      for (const s of open) await s.close().catch(() => undefined);
      if (options.drop) for (const t of tables) await options.drop(t);
    });

    test('create, get, and versions that start at 1 and grow by one per write', async () => {
      const s = await fresh();
      const created = await s.create('a', { title: 'one', n: 1 });
      assert.deepEqual(created, { id: 'a', version: 1, data: { title: 'one', n: 1 } });
      assert.deepEqual(await s.get('a'), created);
      assert.equal(await s.get('missing'), undefined);
      const updated = await s.update('a', { n: 2, done: true });
      assert.deepEqual(updated, { id: 'a', version: 2, data: { title: 'one', n: 2, done: true } });
      const replaced = await s.set('a', { title: 'two' });
      assert.deepEqual(replaced, { id: 'a', version: 3, data: { title: 'two' } });
      const upserted = await s.upsert('a', { title: 'three' });
      assert.deepEqual(upserted, { id: 'a', version: 4, data: { title: 'three' } });
      const inserted = await s.upsert('b', { title: 'new' });
      assert.deepEqual(inserted, { id: 'b', version: 1, data: { title: 'new' } });
      assert.deepEqual(await s.get('a'), upserted);
      await s.delete('a');
      assert.equal(await s.get('a'), undefined);
      assert.deepEqual(await s.get('b'), inserted);
    });

    test('RECORD_EXISTS and RECORD_NOT_FOUND', async () => {
      const s = await fresh();
      await s.create('x', { v: 1 });
      await assert.rejects(s.create('x', { v: 2 }), { code: 'RECORD_EXISTS', http: 409 });
      assert.deepEqual((await s.get('x'))?.data, { v: 1 });
      await assert.rejects(s.update('nope', { v: 1 }), { code: 'RECORD_NOT_FOUND', http: 404 });
      await assert.rejects(s.set('nope', { v: 1 }), { code: 'RECORD_NOT_FOUND', http: 404 });
      await assert.rejects(s.delete('nope'), { code: 'RECORD_NOT_FOUND', http: 404 });
      assert.equal(await s.get('nope'), undefined);
    });

    test('STALE_VERSION on every write that names an old version; the right version passes', async () => {
      const s = await fresh();
      await s.create('r', { v: 1 });
      await s.update('r', { v: 2 }); // now version 2
      for (const write of [
        () => s.update('r', { v: 9 }, { expectedVersion: 1 }),
        () => s.set('r', { v: 9 }, { expectedVersion: 1 }),
        () => s.upsert('r', { v: 9 }, { expectedVersion: 3 }),
        () => s.delete('r', { expectedVersion: 1 }),
        () => s.upsert('absent', { v: 9 }, { expectedVersion: 1 }),
      ]) {
        await assert.rejects(write(), { code: 'STALE_VERSION', http: 409 });
      }
      assert.deepEqual(await s.get('r'), { id: 'r', version: 2, data: { v: 2 } });
      assert.equal(await s.get('absent'), undefined);
      assert.equal((await s.update('r', { v: 3 }, { expectedVersion: 2 })).version, 3);
      assert.equal((await s.set('r', { v: 4 }, { expectedVersion: 3 })).version, 4);
      await s.delete('r', { expectedVersion: 4 });
      assert.equal(await s.get('r'), undefined);
    });

    test('idempotency: the same key applied twice has one effect and returns the first result', async () => {
      const s = await fresh();
      const first = await s.create(randomUUID(), { t: 1 }, { idempotencyKey: 'run1:create' });
      // a redelivered step generates a new id: the key, not the id, makes it the same write
      const again = await s.create(randomUUID(), { t: 2 }, { idempotencyKey: 'run1:create' });
      assert.deepEqual(again, first);
      assert.equal((await s.list()).list.length, 1);

      await s.update(first.id, { n: 1 }, { idempotencyKey: 'run1:update' });
      const u2 = await s.update(first.id, { n: 2 }, { idempotencyKey: 'run1:update' });
      assert.equal(u2.version, 2);
      assert.deepEqual((await s.get(first.id))?.data, { t: 1, n: 1 });

      await s.delete(first.id, { idempotencyKey: 'run1:delete' });
      await s.delete(first.id, { idempotencyKey: 'run1:delete' }); // no RECORD_NOT_FOUND the second time
      assert.equal(await s.get(first.id), undefined);
    });

    test('idempotency: a failed write does not use up its key; concurrent deliveries write once', async () => {
      const s = await fresh();
      await s.create('taken', {});
      await assert.rejects(s.create('taken', {}, { idempotencyKey: 'k1' }), { code: 'RECORD_EXISTS' });
      const ok = await s.create('free', { a: 1 }, { idempotencyKey: 'k1' });
      assert.equal(ok.id, 'free');
      const results = await Promise.all(
        Array.from({ length: 5 }, (_, i) => s.create(`c${i}`, { i }, { idempotencyKey: 'k2' })),
      );
      assert.equal(new Set(results.map((r) => r.id)).size, 1);
      const ids = (await s.list()).list.map((r) => r.id).filter((id) => id.startsWith('c'));
      assert.equal(ids.length, 1);
    });

    test('idempotency: a redelivery answers the record read back, or { id, version, data: {} } once it changed', async () => {
      const s = await fresh();
      // every kind of write, redelivered while the record is unchanged: the first answer again
      const c1 = await s.create('r1', { a: 1, nested: { b: [1, 2] } }, { idempotencyKey: 'rd:c' });
      assert.deepEqual(await s.create('other', { a: 9 }, { idempotencyKey: 'rd:c' }), c1);
      const u1 = await s.update('r1', { u: true }, { idempotencyKey: 'rd:u' });
      assert.deepEqual(await s.update('r1', { u: false }, { idempotencyKey: 'rd:u' }), u1);
      const s1 = await s.set('r1', { s: 1 }, { idempotencyKey: 'rd:s' });
      assert.deepEqual(await s.set('r1', { s: 2 }, { idempotencyKey: 'rd:s' }), s1);
      const p1 = await s.upsert('r1', { p: 1 }, { idempotencyKey: 'rd:p' });
      assert.deepEqual(await s.upsert('r1', { p: 2 }, { idempotencyKey: 'rd:p' }), p1);
      assert.deepEqual(await s.get('r1'), { id: 'r1', version: 4, data: { p: 1 } });
      assert.equal(await s.get('other'), undefined);

      // the record moved on: the redelivery reports the same write, applies nothing, repeats no data
      await s.update('r1', { later: true });
      assert.deepEqual(await s.update('r1', { u: 3 }, { idempotencyKey: 'rd:u' }), { id: 'r1', version: 2, data: {} });
      assert.deepEqual(await s.get('r1'), { id: 'r1', version: 5, data: { p: 1, later: true } });

      // deleted and created again with the same id and version: not the record that write left
      const first = await s.create('r2', { gen: 1 }, { idempotencyKey: 'rd:c2' });
      await s.delete('r2', { idempotencyKey: 'rd:d2' });
      await s.create('r2', { gen: 2 });
      assert.deepEqual(await s.create('r2', { gen: 3 }, { idempotencyKey: 'rd:c2' }), { ...first, data: {} });
      await s.delete('r2', { idempotencyKey: 'rd:d2' }); // applies nothing: the new r2 stays
      assert.deepEqual(await s.get('r2'), { id: 'r2', version: 1, data: { gen: 2 } });
    });

    test('concurrent writes that expect the same version: exactly one wins', async () => {
      const s = await fresh();
      await s.create('hot', { n: 0 });
      const results = await Promise.allSettled(
        Array.from({ length: 6 }, (_, i) => s.update('hot', { n: i + 1 }, { expectedVersion: 1 })),
      );
      const won = results.filter((r) => r.status === 'fulfilled');
      assert.equal(won.length, 1);
      for (const r of results) {
        if (r.status === 'rejected') assert.equal((r.reason as { code?: string }).code, 'STALE_VERSION');
      }
      assert.equal((await s.get('hot'))?.version, 2);
      // without an expected version every write applies, one after the other
      await Promise.all(Array.from({ length: 5 }, (_, i) => s.update('hot', { [`k${i}`]: i })));
      const after5 = await s.get('hot');
      assert.equal(after5?.version, 7);
      assert.deepEqual(Object.keys(after5?.data ?? {}).sort(), ['k0', 'k1', 'k2', 'k3', 'k4', 'n']);
    });

    test('ids and values with quotes, unicode and SQL text are stored as they are', async () => {
      const s = await fresh();
      const ids = ["a'; drop table t; --", 'ünïcödé-😀', 'with space', 'slash/and\\back', '%_like'];
      for (const id of ids) await s.create(id, { text: `${id} "quoted" \\ back\`tick`, emoji: '😀' });
      for (const id of ids) assert.equal((await s.get(id))?.data['emoji'], '😀');
      assert.deepEqual(
        (await s.list({ filter: { id: '%_like' } })).list.map((r) => r.id),
        ['%_like'],
      );
      assert.equal(await s.get('%'), undefined);
      assert.equal((await s.list()).list.length, ids.length);
    });

    test('stored data is a copy: mutating inputs or results never changes the store', async () => {
      const s = await fresh();
      const input = { nested: { a: 1 }, list: [1] };
      const r = await s.create('m', input);
      input.nested.a = 99;
      input.list.push(2);
      (r.data['nested'] as { a: number }).a = 42;
      const got = await s.get('m');
      assert.deepEqual(got?.data, { nested: { a: 1 }, list: [1] });
      (got?.data as Record<string, unknown>)['x'] = 1;
      assert.deepEqual((await s.get('m'))?.data, { nested: { a: 1 }, list: [1] });
    });

    test('a patch cannot reach the prototype; oversized data and bad ids are refused', async () => {
      const s = await fresh();
      await s.create('p', { a: 1 });
      const patch = JSON.parse('{"__proto__": {"polluted": true}, "b": 2}') as Record<string, unknown>;
      const r = await s.update('p', patch);
      assert.deepEqual(r.data, { a: 1, b: 2 });
      assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
      await assert.rejects(s.create('big', { blob: 'x'.repeat(1024 * 1024 + 10) }), { code: 'PAYLOAD_TOO_LARGE' });
      await assert.rejects(s.create('', {}), { code: 'VALIDATION_FAILED' });
      await assert.rejects(s.create('x'.repeat(300), {}), { code: 'VALIDATION_FAILED' });
    });

    test('list: default limit 100, max 1000, filter, sort, skip', async () => {
      const s = await fresh();
      for (let i = 0; i < 1100; i++) {
        await s.create(`r${String(i).padStart(4, '0')}`, { n: (i * 7) % 1100, group: i % 2 ? 'odd' : 'even' });
      }
      assert.equal((await s.list()).list.length, 100);
      const big = await s.list({ limit: 5000 });
      assert.equal(big.list.length, 1000);
      assert.ok(big.next);
      // insertion order by default
      assert.deepEqual(
        (await s.list({ limit: 3 })).list.map((r) => r.id),
        ['r0000', 'r0001', 'r0002'],
      );
      const odd = await s.list({ filter: { group: 'odd' }, limit: 1000 });
      assert.equal(odd.list.length, 550);
      assert.ok(odd.list.every((r) => r.data['group'] === 'odd'));
      assert.equal(odd.next, undefined);
      const asc = await s.list({ sort: 'n', limit: 5 });
      assert.deepEqual(
        asc.list.map((r) => r.data['n']),
        [0, 1, 2, 3, 4],
      );
      const desc = await s.list({ sort: '-n', limit: 3, skip: 2 });
      assert.deepEqual(
        desc.list.map((r) => r.data['n']),
        [1097, 1096, 1095],
      );
      const byId = await s.list({ filter: { id: 'r0007' } });
      assert.deepEqual(
        byId.list.map((r) => r.id),
        ['r0007'],
      );
      const both = await s.list({ filter: { group: 'even', n: 14 } });
      assert.deepEqual(
        both.list.map((r) => r.id),
        ['r0002'],
      );
    });

    test('list: cursor paging visits every record once, in order, for each sort', async () => {
      const s = await fresh();
      for (let i = 0; i < 237; i++) {
        // `rank` has many ties and is missing on some records: the id breaks ties
        const data: Record<string, unknown> = { n: (i * 13) % 237, owner: i % 3 === 0 ? 'ann' : 'bob' };
        if (i % 5 !== 0) data['rank'] = i % 4;
        await s.create(`id${String(i).padStart(3, '0')}`, data);
      }
      for (const sort of [undefined, 'n', '-n', 'rank', '-rank', 'id', '-id']) {
        for (const filter of [undefined, { owner: 'ann' }]) {
          const all = await s.list({ sort, filter, limit: 1000 });
          const seen: string[] = [];
          let next: string | undefined;
          let pages = 0;
          do {
            const page = await s.list({ sort, filter, limit: 10, after: next });
            seen.push(...page.list.map((r) => r.id));
            next = page.next;
            pages++;
            assert.ok(pages < 100, 'paging does not end');
          } while (next);
          assert.deepEqual(
            seen,
            all.list.map((r) => r.id),
            `sort ${sort} filter ${JSON.stringify(filter)}`,
          );
          assert.equal(new Set(seen).size, seen.length);
        }
      }
    });

    test('list: a page stops at maxPageBytes (UTF-8 bytes of data) with next; paging loses and repeats nothing', async () => {
      // each record is about 4 KB of JSON but 2 K characters: a budget of 10 000 bytes holds two
      const s = await fresh({ maxPageBytes: 10_000 });
      for (let i = 0; i < 15; i++) await s.create(`p${String(i).padStart(2, '0')}`, { n: i, pad: 'é'.repeat(2000) });
      // one record larger than the budget: a page that starts with it holds it alone and moves on
      await s.create('p15', { n: 15, pad: 'x'.repeat(30_000) });
      for (const sort of [undefined, 'n', '-n']) {
        for (const follow of [false, true]) {
          const seen: number[] = [];
          const sizes: number[] = [];
          let next: string | undefined;
          for (let pages = 0; ; pages++) {
            assert.ok(pages < 50, 'paging does not end');
            const page = await s.list({ sort, follow, limit: 100, after: next });
            if (page.list.length === 0) break;
            sizes.push(page.list.length);
            seen.push(...page.list.map((r) => r.data['n'] as number));
            for (const r of page.list) assert.equal((r.data['pad'] as string).length, r.id === 'p15' ? 30_000 : 2000);
            if (page.next === undefined) break;
            next = page.next;
          }
          const order = Array.from({ length: 16 }, (_, i) => i);
          assert.deepEqual(seen, sort === '-n' ? order.reverse() : order, `sort ${sort} follow ${follow}`);
          // pages of two small records; the big one alone
          assert.ok(Math.max(...sizes) === 2, `page sizes ${sizes.join(',')}`);
          assert.ok(sizes.filter((n) => n === 1).length <= 2, `page sizes ${sizes.join(',')}`);
        }
      }
      // `limit` still applies within the budget, and the default budget holds a whole page of these
      assert.equal((await s.list({ limit: 1 })).list.length, 1);
      const roomy = await fresh();
      for (let i = 0; i < 15; i++) await roomy.create(`p${i}`, { n: i, pad: 'é'.repeat(2000) });
      const whole = await roomy.list({ limit: 100 });
      assert.equal(whole.list.length, 15);
      assert.equal(whole.next, undefined);
    });

    test('list: paging is stable while records are inserted and deleted', async () => {
      const s = await fresh();
      for (let i = 0; i < 50; i++) await s.create(`k${String(i * 2).padStart(3, '0')}`, { n: i * 2 });
      for (const sort of [undefined, 'n']) {
        const seen: string[] = [];
        let page = await s.list({ sort, limit: 10 });
        seen.push(...page.list.map((r) => r.id));
        // insert one record before the cursor and one after; delete one already seen
        const tag = sort ?? 'seq';
        await s.create(`early-${tag}`, { n: -1 });
        await s.create(`late-${tag}`, { n: 1000 });
        await s.delete(seen[0] as string);
        while (page.next) {
          page = await s.list({ sort, limit: 10, after: page.next });
          seen.push(...page.list.map((r) => r.id));
        }
        assert.equal(new Set(seen).size, seen.length, 'no record is repeated');
        for (let i = 1; i < 50; i++) assert.ok(seen.includes(`k${String(i * 2).padStart(3, '0')}`));
        assert.ok(seen.includes(`late-${tag}`), 'a record inserted after the cursor is seen');
        if (sort === 'n') assert.ok(!seen.includes(`early-${tag}`), 'a record inserted before the cursor is not');
        await s.create(seen[0] as string, { n: 0 });
      }
    });

    test('list with follow: next on every page, kept on an empty page; later records seen exactly once', async () => {
      for (const sort of [undefined, 'n']) {
        const s = await fresh();
        for (let i = 0; i < 5; i++) await s.create(`f${i}`, { n: i });
        const seen: string[] = [];
        let page = await s.list({ sort, limit: 2, follow: true });
        let cursor = page.next;
        seen.push(...page.list.map((r) => r.id));
        for (let polls = 0; polls < 5; polls++) {
          page = await s.list({ sort, limit: 2, follow: true, after: cursor });
          assert.ok(page.next, 'follow always returns next');
          cursor = page.next;
          seen.push(...page.list.map((r) => r.id));
        }
        assert.deepEqual(seen, ['f0', 'f1', 'f2', 'f3', 'f4']);
        const empty = await s.list({ sort, limit: 2, follow: true, after: cursor });
        assert.deepEqual(empty.list, []);
        assert.equal(empty.next, cursor, 'an empty page keeps the position');
        await s.create(`g-${sort ?? 'seq'}`, { n: 100 });
        const fresh1 = await s.list({ sort, limit: 2, follow: true, after: cursor });
        assert.deepEqual(
          fresh1.list.map((r) => r.id),
          [`g-${sort ?? 'seq'}`],
          'a record added later shows up once',
        );
        const again = await s.list({ sort, limit: 2, follow: true, after: fresh1.next });
        assert.deepEqual(again.list, []);
        const plain = await s.list({ sort, limit: 100 });
        assert.equal(plain.next, undefined, 'without follow, the last page has no next');
      }
    });

    test('list: null filter matches missing fields; bad cursors, fields and values are refused', async () => {
      const s = await fresh();
      await s.create('with', { tag: 'x' });
      await s.create('without', { other: 1 });
      assert.deepEqual(
        (await s.list({ filter: { tag: null } })).list.map((r) => r.id),
        ['without'],
      );
      for (let i = 0; i < 5; i++) await s.create(`z${i}`, { n: i });
      const page = await s.list({ sort: 'n', limit: 2 });
      assert.ok(page.next);
      await assert.rejects(s.list({ sort: '-n', after: page.next }), { code: 'INVALID_CURSOR', http: 400 });
      await assert.rejects(s.list({ after: 'not a cursor!' }), { code: 'INVALID_CURSOR' });
      await assert.rejects(s.list({ after: Buffer.from('{"a":1}').toString('base64url') }), { code: 'INVALID_CURSOR' });
      await assert.rejects(s.list({ sort: "n') or 1=1 --" }), { code: 'VALIDATION_FAILED' });
      await assert.rejects(s.list({ filter: { "a'b": 1 } }), { code: 'VALIDATION_FAILED' });
      await assert.rejects(s.list({ filter: { n: { $gt: 1 } } }), { code: 'VALIDATION_FAILED' });
      await assert.rejects(s.list({ limit: -1 }), { code: 'VALIDATION_FAILED' });
    });

    test('named query: values are bound, never executed', async () => {
      const s = await fresh();
      await s.create('q1', { owner: 'ann', n: 1 });
      await s.create('q2', { owner: 'bob', n: 2 });
      await s.create('q3', { owner: 'ann', n: 3 });
      const ann = await s.query('byOwner', { owner: 'ann' });
      assert.deepEqual(ann.list.map((r) => (r as StateRecord).id).sort(), ['q1', 'q3']);
      for (const evil of ["x'); drop table t; --", "' OR '1'='1", 'ann" OR 1=1 --', "'; DELETE FROM records; --"]) {
        assert.deepEqual((await s.query('byOwner', { owner: evil })).list, []);
      }
      await s.create('q4', { owner: "x'); drop table t; --" });
      const exact = await s.query('byOwner', { owner: "x'); drop table t; --" });
      assert.deepEqual(
        exact.list.map((r) => (r as StateRecord).id),
        ['q4'],
      );
      assert.equal((await s.list()).list.length, 4);
      await assert.rejects(s.query('byOwner', {}), { code: 'VALIDATION_FAILED' });
      await assert.rejects(s.query('nope', { owner: 'ann' }), { code: 'QUERY_NOT_FOUND' });
    });

    test('ping succeeds while open; a closed state is STATE_UNAVAILABLE', async () => {
      const table = `c_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
      tables.push(table);
      const s = await makeState(table);
      await s.ping();
      await s.create('a', {});
      await s.close();
      await assert.rejects(s.ping(), { code: 'STATE_UNAVAILABLE', http: 503 });
      await assert.rejects(s.get('a'), { code: 'STATE_UNAVAILABLE' });
    });
  });
}
