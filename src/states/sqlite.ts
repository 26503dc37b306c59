import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { SagawayError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { QuerySettings } from '../config/settings.js';
import { decodeCursor, nextOf } from './cursor.js';
import { normalizeList, type FilterValue } from './list-options.js';
import { bindValues, compileNamedQuery, type CompiledQuery } from './named-params.js';
import { listClauses, type SqlDialect } from './sql-list.js';
import type { ListOptions, ListPage, QueryResult, State, StateRecord, WriteOptions } from './state.js';
import { IDEMPOTENCY_RETENTION_MS, checkId, dataJson, planWrite, type WriteOp } from './write-plan.js';
import { WriteMethods } from './write-methods.js';
import { sqlTableNames } from './sql-table.js';

/**
 * The `sqlite` state (better-sqlite3, WAL): one table per state with the contract's columns
 * id, version, data (JSON text), created_at, updated_at, plus `seq` (an AUTOINCREMENT key that
 * gives insertion order for paging), and `<table>_idem` holding applied idempotency keys. A write
 * and its idempotency key are stored in one IMMEDIATE transaction. Statements are prepared once
 * and cached.
 */

/** Options of a SQLite state. */
export interface SqliteStateOptions {
  alias: string;
  /** a file path, or ":memory:" */
  file: string;
  table: string;
  queries?: Readonly<Record<string, QuerySettings>>;
  log?: Logger;
}

/** SQLite identifiers have no length limit; 63 keeps names portable to PostgreSQL. */
const MAX_TABLE = 63;
const MAX_QUERY_ROWS = 1000;
const MAX_CACHED_STATEMENTS = 200;

interface RowData {
  seq: number;
  id: string;
  version: number;
  data: string;
  _sk?: unknown;
}

/** A state in a SQLite database file. */
export class SqliteState extends WriteMethods implements State {
  readonly alias: string;
  readonly kind = 'sqlite' as const;
  private readonly options: SqliteStateOptions;
  private readonly t: string;
  private readonly ti: string;
  private db: BetterSqlite3.Database | undefined;
  private readonly stmts = new Map<string, BetterSqlite3.Statement>();
  private readonly compiled = new Map<string, CompiledQuery>();
  private txWrite:
    ((op: WriteOp, id: string, data: string | undefined, o: WriteOptions | undefined) => StateRecord) | undefined;
  private writesSincePrune = 0;

  constructor(options: SqliteStateOptions) {
    super();
    ({ t: this.t, ti: this.ti } = sqlTableNames(options.table, MAX_TABLE));
    this.options = options;
    this.alias = options.alias;
  }

  async init(): Promise<void> {
    if (this.db) return;
    const { default: Database } = await import('better-sqlite3');
    const file = this.options.file;
    let db: BetterSqlite3.Database;
    try {
      // a fresh checkout has no data folder yet: make it, as the user would expect
      if (file !== ':memory:' && file !== '') await mkdir(dirname(file), { recursive: true });
      db = new Database(file);
    } catch (err) {
      throw new SagawayError('STATE_UNAVAILABLE', `state "${this.alias}": cannot open its database file`, {
        cause: err,
      });
    }
    try {
      // the timeout first: another process may hold the file while this one switches to WAL
      db.pragma('busy_timeout = 5000');
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      db.exec(
        `CREATE TABLE IF NOT EXISTS ${this.t} (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, ` +
          `version INTEGER NOT NULL, data TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);` +
          `CREATE TABLE IF NOT EXISTS ${this.ti} (key TEXT PRIMARY KEY NOT NULL, result TEXT NOT NULL, created_at INTEGER NOT NULL);` +
          `CREATE INDEX IF NOT EXISTS "${this.options.table}_idem_at" ON ${this.ti} (created_at);`,
      );
    } catch (err) {
      db.close();
      throw new SagawayError('STATE_UNAVAILABLE', `state "${this.alias}": cannot open its database`, { cause: err });
    }
    this.db = db;
    const tx = db.transaction((op: WriteOp, id: string, data: string | undefined, o: WriteOptions | undefined) =>
      this.writeInTx(op, id, data, o),
    );
    this.txWrite = (op, id, data, o) => tx.immediate(op, id, data, o);
    this.prune();
  }

  async get(id: string): Promise<StateRecord | undefined> {
    const row = this.stmt(`SELECT id, version, data FROM ${this.t} WHERE id = ?`).get(id) as RowData | undefined;
    return row ? toRecord(row) : undefined;
  }

  async list(options?: ListOptions): Promise<ListPage> {
    const o = normalizeList(options);
    const after = o.after === undefined ? undefined : decodeCursor(o.after, o.sortKey);
    const params: unknown[] = [];
    const bind = (v: unknown): string => {
      params.push(typeof v === 'boolean' ? (v ? 1 : 0) : v);
      return '?';
    };
    const dialect: SqlDialect = {
      sortExpr: (f) => (f === 'id' ? 'id' : `json_extract(data, '$.${f}')`),
      equals: (f: string, v: FilterValue) => {
        const expr = f === 'id' ? 'id' : `json_extract(data, '$.${f}')`;
        return v === null ? `${expr} IS NULL` : `${expr} = ${bind(v)}`;
      },
      bind,
      bindKey: (_f, k) => bind(k),
      nullableKeys: true,
      seq: 'seq',
    };
    const { where, orderBy, sortExpr } = listClauses(o, after, dialect);
    params.push(o.limit + 1, o.skip);
    const sql =
      `SELECT seq, id, version, data, ${sortExpr} AS _sk FROM ${this.t}` +
      (where.length ? ` WHERE ${where.join(' AND ')}` : '') +
      ` ORDER BY ${orderBy} LIMIT ? OFFSET ?`;
    const rows = this.stmt(sql).all(...params) as RowData[];
    const more = rows.length > o.limit;
    if (more) rows.pop();
    const page: ListPage = { list: rows.map(toRecord) };
    const last = rows[rows.length - 1];
    const next = nextOf(o, more, last && { key: (last._sk ?? null) as string | number | null, id: last.id });
    if (next !== undefined) page.next = next;
    return page;
  }

  async query(name: string, bindings: Record<string, unknown>): Promise<QueryResult> {
    const queries = this.options.queries ?? {};
    const q = Object.hasOwn(queries, name) ? queries[name] : undefined;
    if (!q?.sql) throw new SagawayError('QUERY_NOT_FOUND', `state "${this.alias}" has no query "${name}"`);
    let compiled = this.compiled.get(name);
    if (!compiled) {
      compiled = compileNamedQuery(q.sql, 'sqlite');
      this.compiled.set(name, compiled);
    }
    const values = bindValues(compiled.names, bindings).map((v) => (typeof v === 'boolean' ? (v ? 1 : 0) : v));
    let stmt: BetterSqlite3.Statement;
    try {
      stmt = this.stmt(compiled.text);
    } catch (err) {
      throw queryFailed(this.alias, name, err);
    }
    try {
      if (!stmt.reader) {
        stmt.run(...values);
        return { list: [] };
      }
      const list: unknown[] = [];
      for (const row of stmt.iterate(...values)) {
        if (list.length >= MAX_QUERY_ROWS) {
          this.options.log?.warn({ state: this.alias, query: name }, `query result cut at ${MAX_QUERY_ROWS} rows`);
          break;
        }
        list.push(parseDataColumn(row as Record<string, unknown>));
      }
      return { list };
    } catch (err) {
      throw queryFailed(this.alias, name, err);
    }
  }

  async ping(): Promise<void> {
    try {
      this.stmt('SELECT 1').get();
    } catch (err) {
      throw new SagawayError('STATE_UNAVAILABLE', `state "${this.alias}" is not available`, { cause: err });
    }
  }

  async close(): Promise<void> {
    const db = this.db;
    this.db = undefined;
    this.stmts.clear();
    db?.close();
  }

  protected async write(
    op: WriteOp,
    id: string,
    data: Record<string, unknown> | undefined,
    options?: WriteOptions,
  ): Promise<StateRecord> {
    checkId(id);
    const json = data === undefined ? undefined : dataJson(data);
    this.handle();
    try {
      return (this.txWrite as NonNullable<typeof this.txWrite>)(op, id, json, options);
    } catch (err) {
      if (err instanceof SagawayError) throw err;
      throw new SagawayError('STATE_UNAVAILABLE', `state "${this.alias}": write failed`, { cause: err });
    }
  }

  /** Runs inside an IMMEDIATE transaction: nothing else writes between the read and the write. */
  private writeInTx(op: WriteOp, id: string, json: string | undefined, o: WriteOptions | undefined): StateRecord {
    const key = o?.idempotencyKey;
    if (op === 'create' && json !== undefined && o?.expectedVersion === undefined)
      return this.createInTx(id, json, key);
    if (key !== undefined) {
      const done = this.stmt(`SELECT result FROM ${this.ti} WHERE key = ?`).get(key) as { result: string } | undefined;
      if (done) return JSON.parse(done.result) as StateRecord;
    }
    const row = this.stmt(`SELECT id, version, data FROM ${this.t} WHERE id = ?`).get(id) as RowData | undefined;
    const data = json === undefined ? undefined : (JSON.parse(json) as Record<string, unknown>);
    const plan = planWrite(op, id, row ? toRecord(row) : undefined, data, o);
    const now = new Date().toISOString();
    const r = plan.record;
    if (plan.kind === 'insert') {
      this.stmt(`INSERT INTO ${this.t} (id, version, data, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`).run(
        id,
        r.version,
        op === 'update' ? JSON.stringify(r.data) : (json ?? '{}'),
        now,
        now,
      );
    } else if (plan.kind === 'update') {
      const text = op === 'update' ? JSON.stringify(r.data) : (json ?? '{}');
      this.stmt(`UPDATE ${this.t} SET version = ?, data = ?, updated_at = ? WHERE id = ?`).run(
        r.version,
        text,
        now,
        id,
      );
    } else {
      this.stmt(`DELETE FROM ${this.t} WHERE id = ?`).run(id);
    }
    if (key !== undefined) {
      this.stmt(`INSERT INTO ${this.ti} (key, result, created_at) VALUES (?, ?, ?)`).run(
        key,
        JSON.stringify(r),
        Date.now(),
      );
      if (++this.writesSincePrune >= 1000) this.prune();
    }
    return r;
  }

  /**
   * The hot path of write.Create in two statements: claim the key (storing the result it will
   * have), then insert; a taken id throws, which rolls the claim back with the transaction.
   */
  private createInTx(id: string, json: string, key: string | undefined): StateRecord {
    if (key !== undefined) {
      const result = `{"id":${JSON.stringify(id)},"version":1,"data":${json}}`;
      const claim = this.stmt(
        `INSERT INTO ${this.ti} (key, result, created_at) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING`,
      ).run(key, result, Date.now());
      if (claim.changes === 0) {
        const done = this.stmt(`SELECT result FROM ${this.ti} WHERE key = ?`).get(key) as { result: string };
        return JSON.parse(done.result) as StateRecord;
      }
      if (++this.writesSincePrune >= 1000) this.prune();
    }
    const now = new Date().toISOString();
    const ins = this.stmt(
      `INSERT INTO ${this.t} (id, version, data, created_at, updated_at) VALUES (?, 1, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
    ).run(id, json, now, now);
    if (ins.changes === 0) throw new SagawayError('RECORD_EXISTS', `record "${id}" already exists`);
    return { id, version: 1, data: JSON.parse(json) as Record<string, unknown> };
  }

  private prune(): void {
    this.writesSincePrune = 0;
    this.stmt(`DELETE FROM ${this.ti} WHERE created_at < ?`).run(Date.now() - IDEMPOTENCY_RETENTION_MS);
  }

  private handle(): BetterSqlite3.Database {
    if (!this.db) throw new SagawayError('STATE_UNAVAILABLE', `state "${this.alias}" is not open`);
    return this.db;
  }

  private stmt(sql: string): BetterSqlite3.Statement {
    let s = this.stmts.get(sql);
    if (!s) {
      s = this.handle().prepare(sql);
      // list() makes one statement per filter/sort shape; keep the cache bounded
      if (this.stmts.size >= MAX_CACHED_STATEMENTS) {
        const oldest = this.stmts.keys().next();
        if (!oldest.done) this.stmts.delete(oldest.value);
      }
      this.stmts.set(sql, s);
    }
    return s;
  }
}

function toRecord(row: RowData): StateRecord {
  return { id: row.id, version: row.version, data: JSON.parse(row.data) as Record<string, unknown> };
}

/** A `data` column read by a named query comes back as the object it holds, as on PostgreSQL. */
function parseDataColumn(row: Record<string, unknown>): Record<string, unknown> {
  const data = row['data'];
  if (typeof data === 'string' && (data.startsWith('{') || data.startsWith('['))) {
    try {
      row['data'] = JSON.parse(data);
    } catch {
      // not JSON after all: leave the text as it is
    }
  }
  return row;
}

function queryFailed(alias: string, name: string, err: unknown): SagawayError {
  return new SagawayError('QUERY_FAILED', `query "${name}" of state "${alias}" failed`, { cause: err });
}
