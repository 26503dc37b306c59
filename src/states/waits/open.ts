import type { StateSettings } from '../../config/settings.js';
import { openPostgresRunner, openSqliteRunner } from '../sql-runner.js';
import { sqlTableNames } from '../sql-table.js';
import { SqlWaitStore } from './sql.js';

/**
 * The wait store beside a runner's journal state (issue 21): `<table>_waits` and
 * `<table>_signals` in the same SQLite file or PostgreSQL database. A `memory` journal keeps its
 * waits in an in-memory SQLite database of this process (one process holds a memory journal).
 * The drivers are imported only when used.
 */
export function createWaitStore(state: StateSettings): SqlWaitStore {
  if (state.type === 'postgres') {
    const table = sqlTableNames(state.table.slice(0, 50), 63).t.slice(1, -1);
    // the journal's own table (states/postgres.ts names it so), read by the claim
    const journal = sqlTableNames(state.table, 63).t;
    return new SqlWaitStore(
      'postgres',
      table,
      { bigint: 'BIGINT', lockRows: 'FOR UPDATE SKIP LOCKED', batched: { journal } },
      () => openPostgresRunner(state.alias, state.url, Math.min(4, state.poolSize)),
    );
  }
  const file = state.type === 'sqlite' ? state.file : ':memory:';
  const table = state.type === 'sqlite' ? state.table : `mem_${state.alias}`;
  return new SqlWaitStore('sqlite', sqlTableNames(table, 100).t.slice(1, -1), { bigint: 'INTEGER', lockRows: '' }, () =>
    openSqliteRunner(file),
  );
}
