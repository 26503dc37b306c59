/**
 * The SQLite driver behind the `sqlite` state: `node:sqlite` where the runtime has it (Node
 * 22.13+ and 24, no native addon to build), better-sqlite3 12 only where it does not (Node 20).
 * better-sqlite3 12 cannot stay the driver everywhere: on Node 24.19+ its Statement destructor
 * aborts the process during GC (nodejs/node#65446), and better-sqlite3 13, which fixes that,
 * does not run on Node 20. Both drivers are loaded lazily, so a process without SQLite states
 * loads neither, and on Node 22+ better-sqlite3 is never loaded at all.
 *
 * The interface is the small subset the state needs; both implementations give it the same
 * meaning, checked by the state contract suite on every Node version CI runs.
 */

/** Which driver a database was opened with. */
export type SqliteDriverName = 'node:sqlite' | 'better-sqlite3';

/** One result row: column name to value. Its prototype is unspecified (node:sqlite: null). */
export type SqlRow = Record<string, unknown>;

/** A prepared statement. Parameters are positional (`?`): strings, numbers, null, bigints, bytes. */
export interface SqlStatement {
  run(...params: unknown[]): { changes: number };
  /** the first row (a SqlRow) or undefined; typed unknown so callers state the row shape they expect */
  get(...params: unknown[]): unknown;
  /** every row (SqlRows) */
  all(...params: unknown[]): unknown[];
  /**
   * The rows one at a time, as plain objects; a statement that returns no rows (INSERT, UPDATE)
   * runs and yields nothing. An integer beyond 2^53 comes back as the nearest number on both
   * drivers (better-sqlite3's default; node:sqlite would throw). Used for user SQL (named queries).
   */
  iterate(...params: unknown[]): IterableIterator<SqlRow>;
}

/** An open database. */
export interface SqlDatabase {
  readonly driver: SqliteDriverName;
  /** Run SQL text without results (DDL, PRAGMAs, several statements). */
  exec(sql: string): void;
  prepare(sql: string): SqlStatement;
  /**
   * Wrap `fn` so each call runs in a `BEGIN IMMEDIATE` transaction: committed when it returns,
   * rolled back when it throws. Calls do not nest.
   */
  immediate<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R;
  close(): void;
}

let chosen: SqliteDriverName | undefined;

/** The driver this runtime uses: `node:sqlite` when it is built in (and complete), else better-sqlite3. */
export async function sqliteDriverName(): Promise<SqliteDriverName> {
  if (chosen === undefined) {
    const { nodeSqliteAvailable } = await import('./sqlite-driver-node.js');
    chosen = nodeSqliteAvailable() ? 'node:sqlite' : 'better-sqlite3';
  }
  return chosen;
}

/** Open (creating when missing) the database `file`, or an in-memory one for ":memory:". */
export async function openSqlite(file: string): Promise<SqlDatabase> {
  if ((await sqliteDriverName()) === 'node:sqlite') {
    const { openNodeSqlite } = await import('./sqlite-driver-node.js');
    return openNodeSqlite(file);
  }
  const { openBetterSqlite } = await import('./sqlite-driver-better.js');
  return openBetterSqlite(file);
}
