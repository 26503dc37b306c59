import { test } from 'node:test';
import pg from 'pg';
import { runStateContract } from './contract.js';
import { groupCommitCases } from './group-commit-cases.js';
import { groupCommit } from '../../src/states/group-commit.js';
import { PostgresState } from '../../src/states/postgres.js';
import { pgUnavailableReason, skipOrFail } from './pg-available.js';

/** Group commit on the real PostgreSQL: the contract suite through it, and its own cases. */

const URL = process.env['SAGAWAY_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const reason = await pgUnavailableReason(URL);

async function drop(table: string): Promise<void> {
  const c = new pg.Client({ connectionString: URL });
  await c.connect();
  try {
    await c.query(`drop table if exists "${table}", "${table}_idem"`);
  } finally {
    await c.end();
  }
}

async function open(table: string, options: { maxPageBytes?: number } = {}): Promise<PostgresState> {
  const s = new PostgresState({
    ...options,
    alias: table,
    url: URL,
    table,
    poolSize: 4,
    queries: { byOwner: { sql: `select id, data from ${table} where data->>'owner' = :owner` } },
  });
  await s.init();
  return s;
}

if (reason !== undefined) {
  test('postgres group commit', { skip: skipOrFail(reason) }, () => undefined);
} else {
  const made: string[] = [];
  const track = (t: string) => (made.includes(t) ? t : (made.push(t), t));
  runStateContract('postgres, group-committed', async (table, options) => groupCommit(await open(table, options)), {
    drop,
  });
  groupCommitCases(
    'postgres',
    (t) => open(track(t)),
    (t) => open(t),
  );
  test.after(async () => {
    for (const t of made) await drop(t);
  });
}
