import type { SqlDatabase, SqlRow, SqlStatement } from './sqlite-driver.js';

/** `node:sqlite` behind the driver interface: the SQLite driver on Node 22.13+ and 24. */

/** The part of `node:sqlite` used here (@types/node 20 does not describe the module). */
interface StatementSync {
  run(...params: unknown[]): { changes: number | bigint };
  get(...params: unknown[]): SqlRow | undefined;
  all(...params: unknown[]): SqlRow[];
  iterate(...params: unknown[]): IterableIterator<SqlRow>;
  setReadBigInts(enabled: boolean): void;
}
interface DatabaseSync {
  exec(sql: string): void;
  prepare(sql: string): StatementSync;
  close(): void;
}
interface NodeSqlite {
  DatabaseSync: new (file: string) => DatabaseSync;
  StatementSync: { prototype: Partial<StatementSync> };
}

let loaded: NodeSqlite | null | undefined;

/**
 * Load `node:sqlite` once, if this runtime has it without a flag and with what the state needs
 * (`iterate`, added with the unflagging in 22.13). Node 22 prints "ExperimentalWarning: SQLite
 * is an experimental feature" when the module loads; a gateway did not opt into anything
 * experimental by configuring a SQLite state, so that one warning, emitted synchronously while
 * the module loads, is dropped. Every other warning passes through.
 */
function load(): NodeSqlite | null {
  if (loaded !== undefined) return loaded;
  const emit = process.emitWarning;
  process.emitWarning = function (this: unknown, warning: string | Error, ...rest: unknown[]): void {
    const text = typeof warning === 'string' ? warning : warning.message;
    const type = typeof rest[0] === 'string' ? rest[0] : (rest[0] as { type?: string } | undefined)?.type;
    if (type === 'ExperimentalWarning' && text.startsWith('SQLite ')) return;
    (emit as (...a: unknown[]) => void).call(process, warning, ...rest);
  } as typeof process.emitWarning;
  let mod: NodeSqlite | undefined;
  try {
    mod = process.getBuiltinModule?.('node:sqlite') as NodeSqlite | undefined;
  } catch {
    mod = undefined;
  } finally {
    process.emitWarning = emit;
  }
  const complete =
    typeof mod?.DatabaseSync === 'function' &&
    typeof mod.StatementSync?.prototype.iterate === 'function' &&
    typeof mod.StatementSync.prototype.setReadBigInts === 'function';
  loaded = complete ? (mod as NodeSqlite) : null;
  return loaded;
}

/** Whether this runtime has a usable `node:sqlite`. */
export function nodeSqliteAvailable(): boolean {
  return load() !== null;
}

export function openNodeSqlite(file: string): SqlDatabase {
  const mod = load();
  if (!mod) throw new Error('node:sqlite is not available in this runtime');
  const db = new mod.DatabaseSync(file);
  let begin: StatementSync | undefined;
  let commit: StatementSync | undefined;
  return {
    driver: 'node:sqlite',
    exec: (sql) => db.exec(sql),
    prepare(sql): SqlStatement {
      const s = db.prepare(sql);
      return {
        run: (...p) => {
          const r = s.run(...p);
          return { changes: Number(r.changes) };
        },
        get: (...p) => s.get(...p),
        all: (...p) => s.all(...p),
        iterate: (...p) => plainRows(s, p),
      };
    },
    immediate<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
      return (...args: A): R => {
        (begin ??= db.prepare('BEGIN IMMEDIATE')).run();
        try {
          const r = fn(...args);
          (commit ??= db.prepare('COMMIT')).run();
          return r;
        } catch (err) {
          // also after a failed COMMIT (SQLITE_BUSY), which leaves the transaction open
          try {
            db.exec('ROLLBACK');
          } catch {
            // nothing was open any more
          }
          throw err;
        }
      };
    },
    close: () => db.close(),
  };
}

/**
 * Rows as plain objects (node:sqlite makes null-prototype ones) with integers read as BigInt and
 * handed back as numbers, so a value beyond 2^53 is the nearest number as with better-sqlite3
 * instead of a RangeError. The flag is set only while this iteration runs: statements are
 * cached and shared, and the state's own reads stay on plain numbers.
 */
function* plainRows(s: StatementSync, params: unknown[]): IterableIterator<SqlRow> {
  s.setReadBigInts(true);
  try {
    for (const row of s.iterate(...params)) {
      const out: SqlRow = {};
      for (const k of Object.keys(row)) {
        const v = typeof row[k] === 'bigint' ? Number(row[k]) : row[k];
        // a column named __proto__ stays a property (an assignment would set the prototype)
        if (k === '__proto__')
          Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
        else out[k] = v;
      }
      yield out;
    }
  } finally {
    s.setReadBigInts(false);
  }
}
