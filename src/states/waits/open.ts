import type { StateSettings } from '../../config/settings.js';
import { toStateError } from '../postgres-errors.js';
import { openSqlite, type SqlStatement } from '../sqlite-driver.js';
import { sqlTableNames } from '../sql-table.js';
import { SqlWaitStore, type SqlRunner } from './sql.js';

/**
 * The wait store beside a runner's journal state (issue 21): `<table>_waits` and
 * `<table>_signals` in the same SQLite file or PostgreSQL database. A `memory` journal keeps its
 * waits in an in-memory SQLite database of this process (one process holds a memory journal).
 * The drivers are imported only when used.
 */
export function createWaitStore(state: StateSettings): SqlWaitStore {
  if (state.type === 'postgres') {
    const table = sqlTableNames(state.table.slice(0, 50), 63).t.slice(1, -1);
    return new SqlWaitStore('postgres', table, { bigint: 'BIGINT', lockRows: 'FOR UPDATE SKIP LOCKED' }, () =>
      openPostgres(state.alias, state.url, Math.min(4, state.poolSize)),
    );
  }
  const file = state.type === 'sqlite' ? state.file : ':memory:';
  const table = state.type === 'sqlite' ? state.table : `mem_${state.alias}`;
  return new SqlWaitStore('sqlite', sqlTableNames(table, 100).t.slice(1, -1), { bigint: 'INTEGER', lockRows: '' }, () =>
    openSqliteRunner(file),
  );
}

/** A SQLite connection: WAL, and a busy timeout for the moments another process writes. */
async function openSqliteRunner(file: string): Promise<SqlRunner> {
  const db = await openSqlite(file);
  db.exec('PRAGMA busy_timeout = 5000');
  if (file !== ':memory:') db.exec('PRAGMA journal_mode = WAL');
  const statements = new Map<string, { statement: SqlStatement; order: number[] }>();
  return {
    async query(sql, params) {
      let prepared = statements.get(sql);
      if (prepared === undefined) {
        // `$n` becomes `?`, bound in the order they appear (drivers bind `?` by position)
        const order: number[] = [];
        const text = sql.replace(/\$(\d+)/g, (_, n: string) => (order.push(Number(n) - 1), '?'));
        prepared = { statement: db.prepare(text), order };
        statements.set(sql, prepared);
      }
      const values = prepared.order.map((i) => params[i]);
      if (!sql.startsWith('SELECT') && !sql.includes(' RETURNING ')) {
        prepared.statement.run(...values);
        return [];
      }
      return prepared.statement.all(...values) as Record<string, unknown>[];
    },
    async close() {
      db.close();
    },
  };
}

/** A small PostgreSQL pool of its own; an unreachable server is STATE_UNAVAILABLE. */
async function openPostgres(alias: string, url: string, poolSize: number): Promise<SqlRunner> {
  const pg = (await import('pg')).default;
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30_000,
    statement_timeout: 10_000,
  });
  pool.on('error', () => undefined);
  return {
    async query(sql, params) {
      try {
        return (await pool.query(sql, params as unknown[])).rows as Record<string, unknown>[];
      } catch (err) {
        throw toStateError(alias, err);
      }
    },
    close: () => pool.end(),
  };
}
