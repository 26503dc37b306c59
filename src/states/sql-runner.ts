import { toStateError } from './postgres-errors.js';
import { openSqlite, type SqlStatement } from './sqlite-driver.js';

/**
 * The small SQL connections of the stores that live beside a state's own table (the gateway's
 * request keys, issue 21's waits): one statement at a time with `$1`-numbered parameters, on a
 * SQLite file or a PostgreSQL pool of their own. The drivers are imported only when used.
 */

/** One connection's way to run a statement with `$1`-numbered parameters and read its rows. */
export interface SqlRunner {
  query(sql: string, params: readonly unknown[]): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

/** A SQLite connection: WAL, and a busy timeout for the moments another process writes. */
export async function openSqliteRunner(file: string): Promise<SqlRunner> {
  const db = await openSqlite(file);
  db.exec('PRAGMA busy_timeout = 5000');
  if (file !== ':memory:') db.exec('PRAGMA journal_mode = WAL');
  const statements = new Map<string, { statement: SqlStatement; order: number[] }>();
  return {
    async query(sql, params) {
      let prepared = statements.get(sql);
      if (prepared === undefined) {
        // `$n` becomes `?` and the values are bound in the order they appear (better-sqlite3
        // binds values to `?NNN` by position, not by number)
        const order: number[] = [];
        const text = sql.replace(/\$(\d+)/g, (_, n: string) => (order.push(Number(n) - 1), '?'));
        prepared = { statement: db.prepare(text), order };
        statements.set(sql, prepared);
      }
      const values = prepared.order.map((i) => params[i]);
      // better-sqlite3 refuses all() on a statement that returns no rows
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

/** A PostgreSQL pool of its own (a few connections); an unreachable server is STATE_UNAVAILABLE. */
export async function openPostgresRunner(alias: string, url: string, poolSize: number): Promise<SqlRunner> {
  const pg = (await import('pg')).default;
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30_000,
    statement_timeout: 10_000,
  });
  // an idle connection that dies (server restart) is dropped by the pool, not thrown
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

/**
 * A store's one connection, opened and prepared (its tables made) on first use: a failure (the
 * database is down at start) is tried again by the next call rather than kept.
 */
export class LazyConnection {
  private opened: Promise<SqlRunner> | undefined;

  constructor(
    private readonly open: () => Promise<SqlRunner>,
    private readonly prepare: (db: SqlRunner) => Promise<void>,
  ) {}

  get(): Promise<SqlRunner> {
    this.opened ??= this.open()
      .then(async (db) => {
        await this.prepare(db).catch(async (err: unknown) => {
          await db.close().catch(() => undefined);
          throw err;
        });
        return db;
      })
      .catch((err: unknown) => {
        this.opened = undefined;
        throw err;
      });
    return this.opened;
  }

  /** Close the connection if it was opened; the next get() opens a new one. */
  async close(): Promise<void> {
    const opened = this.opened;
    this.opened = undefined;
    if (opened) await (await opened.catch(() => undefined))?.close();
  }
}
