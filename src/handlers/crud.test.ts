import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fakeEnv } from '../../test/states/fake-handler-env.js';
import { MemoryState } from '../states/memory.js';
import { SqliteState } from '../states/sqlite.js';
import type { State, StateRecord, ListPage } from '../states/state.js';
import { queryHandler } from './query.js';
import { readHandler } from './read.js';
import { writeHandler } from './write.js';

/** read, write and query over memory and SQLite states. */

async function states(kind: 'memory' | 'sqlite'): Promise<State> {
  if (kind === 'memory') {
    return new MemoryState({ alias: 'todos', queries: { byOwner: { filter: { owner: ':owner' } } } });
  }
  const s = new SqliteState({
    alias: 'todos',
    file: ':memory:',
    table: 'todos',
    queries: {
      byOwner: { sql: "select id, data from todos where json_extract(data, '$.owner') = :owner order by id" },
    },
  });
  await s.init();
  return s;
}

for (const kind of ['memory', 'sqlite'] as const) {
  describe(`read/write/query on ${kind}`, () => {
    const setup = async () => {
      const todos = await states(kind);
      return { todos, f: fakeEnv({ todos }, [readHandler, writeHandler, queryHandler]) };
    };
    const on = { domain: 'todos' };

    test('Create: id from parameters, from the input, or generated; the id is not stored in data', async () => {
      const { f } = await setup();
      const a = (await f.call('write', 'Create', { title: 'a' }, { ...on, parameters: { id: 'p1' } })) as StateRecord;
      assert.deepEqual(a, { id: 'p1', version: 1, data: { title: 'a' } });
      const b = (await f.call('write', 'Create', { id: 'in1', title: 'b' }, on)) as StateRecord;
      assert.deepEqual(b, { id: 'in1', version: 1, data: { title: 'b' } });
      const c = (await f.call('write', 'Create', { title: 'c' }, on)) as StateRecord;
      assert.match(c.id, /^[0-9a-f-]{36}$/);
      await assert.rejects(f.call('write', 'Create', { id: 'in1' }, on), { code: 'RECORD_EXISTS', http: 409 });
      await assert.rejects(f.call('write', 'Create', [1, 2], on), { code: 'VALIDATION_FAILED' });
      await assert.rejects(f.call('write', 'Create', {}, {}), { code: 'DOMAIN_NOT_FOUND' });
    });

    test('a Create step run twice with the same idempotency key creates one record', async () => {
      const { f, todos } = await setup();
      const first = (await f.call('write', 'Create', { title: 'once' }, { ...on, key: 'run-7:create' })) as StateRecord;
      const second = (await f.call(
        'write',
        'Create',
        { title: 'once' },
        { ...on, key: 'run-7:create' },
      )) as StateRecord;
      assert.deepEqual(second, first);
      assert.equal((await todos.list()).list.length, 1);
      // another run of the same step is another write
      await f.call('write', 'Create', { title: 'twice' }, { ...on, key: 'run-8:create' });
      assert.equal((await todos.list()).list.length, 2);
    });

    test('Get, Update (patch), Set (replace), Upsert, Delete, with expected versions', async () => {
      const { f } = await setup();
      await f.call('write', 'Create', { id: 't', title: 'x', done: false }, on);
      assert.deepEqual(await f.call('read', 'Get', { id: 't' }, on), {
        id: 't',
        version: 1,
        data: { title: 'x', done: false },
      });
      assert.equal(((await f.call('read', 'Get', {}, { ...on, parameters: { id: 't' } })) as StateRecord).id, 't');
      await assert.rejects(f.call('read', 'Get', { id: 'nope' }, on), { code: 'RECORD_NOT_FOUND', http: 404 });
      await assert.rejects(f.call('read', 'Get', {}, on), { code: 'VALIDATION_FAILED' });
      await assert.rejects(f.call('read', 'Get', { id: 'x'.repeat(100_000) }, on), (err: Error & { code?: string }) => {
        assert.equal(err.code, 'VALIDATION_FAILED');
        assert.ok(err.message.length < 200, 'a long id is not echoed back');
        return true;
      });

      const u = (await f.call('write', 'Update', { id: 't', done: true }, on)) as StateRecord;
      assert.deepEqual(u, { id: 't', version: 2, data: { title: 'x', done: true } });
      await assert.rejects(f.call('write', 'Update', { done: false }, { ...on, parameters: { id: 't', version: 1 } }), {
        code: 'STALE_VERSION',
        http: 409,
      });
      // a version from a query string arrives as text
      const s = (await f.call(
        'write',
        'Set',
        { title: 'y' },
        { ...on, parameters: { id: 't', version: '2' } },
      )) as StateRecord;
      assert.deepEqual(s, { id: 't', version: 3, data: { title: 'y' } });
      await assert.rejects(f.call('write', 'Set', { id: 'nope', title: 'z' }, on), { code: 'RECORD_NOT_FOUND' });
      const up = (await f.call('write', 'Upsert', { id: 'new', title: 'n' }, on)) as StateRecord;
      assert.deepEqual(up, { id: 'new', version: 1, data: { title: 'n' } });
      await assert.rejects(f.call('write', 'Update', { id: 'nope', a: 1 }, on), { code: 'RECORD_NOT_FOUND' });
      assert.deepEqual(await f.call('write', 'Delete', { id: 't' }, on), { id: 't', deleted: true });
      await assert.rejects(f.call('write', 'Delete', { id: 't' }, on), { code: 'RECORD_NOT_FOUND' });
      await assert.rejects(f.call('write', 'Update', { id: 'new' }, { ...on, parameters: { version: -1 } }), {
        code: 'VALIDATION_FAILED',
      });
    });

    test('GetList: filter, sort, limit and paging with previous from the input or parameters', async () => {
      const { f } = await setup();
      for (let i = 0; i < 25; i++) {
        await f.call(
          'write',
          'Create',
          { id: `t${String(i).padStart(2, '0')}`, n: 25 - i, owner: i % 2 ? 'ann' : 'bob' },
          on,
        );
      }
      const first = (await f.call('read', 'GetList', {}, { ...on, parameters: { sort: 'n', limit: 10 } })) as ListPage;
      assert.deepEqual(
        first.list.map((r) => r.data['n']),
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
      );
      assert.ok(first.next);
      const second = (await f.call(
        'read',
        'GetList',
        { previous: first.next },
        { ...on, parameters: { sort: 'n', limit: '10' } },
      )) as ListPage;
      assert.deepEqual(
        second.list.map((r) => r.data['n']),
        [11, 12, 13, 14, 15, 16, 17, 18, 19, 20],
      );
      const third = (await f.call(
        'read',
        'GetList',
        {},
        { ...on, parameters: { sort: 'n', limit: 10, previous: second.next } },
      )) as ListPage;
      assert.deepEqual(
        third.list.map((r) => r.data['n']),
        [21, 22, 23, 24, 25],
      );
      assert.equal(third.next, undefined);
      const ann = (await f.call(
        'read',
        'GetList',
        {},
        { ...on, parameters: { filter: { owner: 'ann' }, sort: '-n', skip: 1, limit: 2 } },
      )) as ListPage;
      assert.deepEqual(
        ann.list.map((r) => r.id),
        ['t03', 't05'],
      );
      assert.equal(((await f.call('read', 'GetList', {}, on)) as ListPage).list.length, 25);
      await assert.rejects(f.call('read', 'GetList', { previous: 'garbage!' }, on), {
        code: 'INVALID_CURSOR',
        http: 400,
      });
      await assert.rejects(f.call('read', 'GetList', {}, { ...on, parameters: { filter: 'owner=ann' } }), {
        code: 'VALIDATION_FAILED',
      });
    });

    test('GetQuery: input keys bind :name; metacharacters are data; unknown queries fail', async () => {
      const { f, todos } = await setup();
      await f.call('write', 'Create', { id: 'a', owner: 'ann' }, on);
      await f.call('write', 'Create', { id: 'b', owner: 'bob' }, on);
      await f.call('write', 'Create', { id: 'c', owner: "x'); drop table todos; --" }, on);
      const r = (await f.call('query', 'GetQuery', { owner: 'ann' }, { ...on, parameters: { query: 'byOwner' } })) as {
        list: { id: string }[];
      };
      assert.deepEqual(
        r.list.map((x) => x.id),
        ['a'],
      );
      const evil = (await f.call(
        'query',
        'GetQuery',
        { owner: "x'); drop table todos; --" },
        { ...on, parameters: { query: 'byOwner' } },
      )) as {
        list: { id: string }[];
      };
      assert.deepEqual(
        evil.list.map((x) => x.id),
        ['c'],
      );
      assert.equal((await todos.list()).list.length, 3);
      await assert.rejects(f.call('query', 'GetQuery', { owner: 'a' }, { ...on, parameters: { query: 'nope' } }), {
        code: 'QUERY_NOT_FOUND',
      });
      await assert.rejects(f.call('query', 'GetQuery', { owner: 'a' }, on), { code: 'QUERY_NOT_FOUND' });
      await assert.rejects(f.call('query', 'GetQuery', 'owner', { ...on, parameters: { query: 'byOwner' } }), {
        code: 'VALIDATION_FAILED',
      });
    });
  });
}
