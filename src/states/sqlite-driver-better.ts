import type { SqlDatabase, SqlRow, SqlStatement } from './sqlite-driver.js';

/** better-sqlite3 12 behind the driver interface: the SQLite driver on Node 20 only. */
export async function openBetterSqlite(file: string): Promise<SqlDatabase> {
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(file);
  const none: SqlRow[] = [];
  return {
    driver: 'better-sqlite3',
    exec: (sql) => void db.exec(sql),
    prepare(sql): SqlStatement {
      const s = db.prepare(sql);
      return {
        run: (...p) => s.run(...p),
        get: (...p) => s.get(...p),
        all: (...p) => s.all(...p),
        // better-sqlite3 refuses iterate() on a statement without rows: run it instead
        iterate: (...p) => (s.reader ? (s.iterate(...p) as IterableIterator<SqlRow>) : (s.run(...p), none.values())),
      };
    },
    immediate<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
      const tx = db.transaction(fn);
      return (...args: A) => tx.immediate(...args);
    },
    close: () => void db.close(),
  };
}
