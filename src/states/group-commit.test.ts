import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runStateContract } from '../../test/states/contract.js';
import { groupCommitCases } from '../../test/states/group-commit-cases.js';
import { groupCommit } from './group-commit.js';
import { MemoryState } from './memory.js';
import { SqliteState } from './sqlite.js';

const dir = await mkdtemp(join(tmpdir(), 'sagaway-gc-'));
after(() => rm(dir, { recursive: true, force: true }));

async function sqlite(table: string, options: { maxPageBytes?: number } = {}): Promise<SqliteState> {
  const s = new SqliteState({
    ...options,
    alias: table,
    file: join(dir, `${table}.db`),
    table,
    queries: { byOwner: { sql: `select id, data from ${table} where json_extract(data, '$.owner') = :owner` } },
  });
  await s.init();
  return s;
}

runStateContract('sqlite, group-committed', async (table, options) => groupCommit(await sqlite(table, options)));
groupCommitCases('sqlite', sqlite, sqlite);

test('group commit: a store without writeBatch (memory) is used as it is; one wrapper per store', async () => {
  const m = new MemoryState({ alias: 'm' });
  assert.equal(groupCommit(m), m);
  const s = await sqlite('once');
  const g = groupCommit(s);
  assert.notEqual(g, s);
  assert.equal(groupCommit(s), g, 'shared by every user of the store');
  assert.equal(groupCommit(g), g);
  await g.close();
});
