import type { SqlDatabase } from './sqlite-driver.js';

/**
 * The tables of a `sqlite` state (sqlite.ts): the connection's settings (WAL), the records'
 * table and its key table (`<table>_idem`), created when missing, and a key table of 0.1
 * migrated. Several processes may open one file at once: every step here is safe to repeat.
 */

/** The quoted names of a state's tables (sql-table.ts) and its configured table name. */
export interface SqliteTables {
  /** `table` as configured */
  table: string;
  /** the records' table, quoted */
  t: string;
  /** the key table, quoted */
  ti: string;
}

/** Set the connection up (busy timeout, WAL) and create or migrate the tables. */
export function createTables(db: SqlDatabase, { table, t, ti }: SqliteTables): void {
  // the timeout first: another process may hold the file while this one switches to WAL
  db.exec('PRAGMA busy_timeout = 5000');
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = NORMAL');
  db.exec(
    `CREATE TABLE IF NOT EXISTS ${t} (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, ` +
      `version INTEGER NOT NULL, data TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);` +
      keyTableDdl(ti),
  );
  migrateKeyTable(db, table, ti);
}

/** The key table's schema: a key row is small and of constant size (idempotency.ts). */
function keyTableDdl(name: string): string {
  return (
    `CREATE TABLE IF NOT EXISTS ${name} (key TEXT PRIMARY KEY NOT NULL, record_id TEXT NOT NULL, ` +
    `version INTEGER NOT NULL, hash TEXT, created_at INTEGER NOT NULL);`
  );
}

/**
 * A key table of 0.1 holds a full copy of each result (`result`): rewritten to the small form,
 * keeping every key (their hash is unknown, so a redelivery of one answers `{ id, version,
 * data: {} }`, and still applies nothing). Re-checked inside the transaction: two processes
 * may open the file at once.
 */
function migrateKeyTable(db: SqlDatabase, table: string, ti: string): void {
  const old = (): boolean =>
    (db.prepare(`PRAGMA table_info(${ti})`).all() as { name: string }[]).some((c) => c.name === 'result');
  if (!old()) return;
  const previous = `"${table}_idem_v1"`;
  db.exec('BEGIN IMMEDIATE');
  try {
    if (old()) {
      db.exec(
        `ALTER TABLE ${ti} RENAME TO ${previous};` +
          keyTableDdl(ti) +
          `INSERT INTO ${ti} (key, record_id, version, hash, created_at) SELECT key, ` +
          `json_extract(result, '$.id'), json_extract(result, '$.version'), NULL, created_at FROM ${previous} ` +
          `WHERE json_extract(result, '$.id') IS NOT NULL ORDER BY created_at;` +
          `DROP TABLE ${previous};`,
      );
    }
    db.exec('COMMIT');
  } catch (err) {
    db.exec('ROLLBACK');
    throw err;
  }
}
