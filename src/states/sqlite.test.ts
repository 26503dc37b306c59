import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runStateContract } from '../../test/states/contract.js';
import { SqliteState } from './sqlite.js';

const dir = await mkdtemp(join(tmpdir(), 'sagaway-sqlite-'));
after(() => rm(dir, { recursive: true, force: true }));

runStateContract('sqlite', async (table, options) => {
  const s = new SqliteState({
    ...options,
    alias: table,
    file: join(dir, `${table}.db`),
    table,
    queries: { byOwner: { sql: `select id, data from ${table} where json_extract(data, '$.owner') = :owner` } },
  });
  await s.init();
  return s;
});

test('sqlite: records, versions and idempotency keys survive reopening the file', async () => {
  const file = join(dir, 'reopen.db');
  const a = new SqliteState({ alias: 'todos', file, table: 'todos' });
  await a.init();
  await a.create('t1', { title: 'x' }, { idempotencyKey: 'run:1' });
  await a.update('t1', { done: true });
  await a.close();
  const b = new SqliteState({ alias: 'todos', file, table: 'todos' });
  await b.init();
  assert.deepEqual(await b.get('t1'), { id: 't1', version: 2, data: { title: 'x', done: true } });
  const again = await b.create('t2', { title: 'y' }, { idempotencyKey: 'run:1' });
  assert.equal(again.id, 't1');
  assert.equal(await b.get('t2'), undefined);
  await b.close();
});

test('sqlite: named queries keep string literals, casts and comments, and bind every :name', async () => {
  const s = new SqliteState({
    alias: 'q',
    file: ':memory:',
    table: 'q',
    queries: {
      lit: { sql: "select ':owner' as lit, :owner as v, -- :ignored\n cast(:n as integer) + 1 as n /* :also */" },
      dataCol: { sql: 'select id, data, version from q where id = :id' },
      write: { sql: "update q set data = json_set(data, '$.seen', 1) where id = :id" },
    },
  });
  await s.init();
  const r = await s.query('lit', { owner: "a'; drop table q; --", n: 41 });
  assert.deepEqual(r.list, [{ lit: ':owner', v: "a'; drop table q; --", n: 42 }]);
  await s.create('one', { a: [1, 2] });
  const d = await s.query('dataCol', { id: 'one' });
  assert.deepEqual(d.list, [{ id: 'one', data: { a: [1, 2] }, version: 1 }]);
  assert.deepEqual((await s.query('write', { id: 'one' })).list, []);
  assert.deepEqual((await s.get('one'))?.data, { a: [1, 2], seen: 1 });
  await s.close();
});

test('sqlite: a query the database refuses is QUERY_FAILED without the SQL in the message', async () => {
  const s = new SqliteState({
    alias: 'bad',
    file: ':memory:',
    table: 'bad',
    queries: { broken: { sql: 'select * from nowhere where x = :x' } },
  });
  await s.init();
  await assert.rejects(s.query('broken', { x: 1 }), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'QUERY_FAILED');
    assert.ok(!err.message.includes('nowhere'));
    return true;
  });
  await s.close();
});

test('sqlite: a table name that is not an identifier is refused before any SQL is built', () => {
  assert.throws(() => new SqliteState({ alias: 'x', file: ':memory:', table: 'a"; drop table b; --' }), {
    code: 'CONFIG_INVALID',
  });
});

test('sqlite: the folder of the database file is created when missing', async () => {
  const file = join(dir, 'nested', 'deeper', 'todos.db');
  const s = new SqliteState({ alias: 'todos', file, table: 'todos' });
  await s.init();
  await s.create('a', {});
  assert.equal((await s.get('a'))?.version, 1);
  await s.close();
});
