import { countJsonValues, DEFAULT_MAX_RECORD_VALUES } from '../core/json-values.js';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { SagawayError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { QuerySettings } from '../config/settings.js';
import { decodeCursor, nextOf } from './cursor.js';
import { DEFAULT_MAX_PAGE_BYTES, normalizeList, type FilterValue } from './list-options.js';
import { bindValues, compileNamedQuery, type CompiledQuery } from './named-params.js';
import { startCheckpointerLater, type Checkpointer } from './sqlite-checkpointer.js';
import { cutPageByValues, listClauses, trimPage, withPageBudget, type SqlDialect } from './sql-list.js';
import type {
  BatchOutcome,
  BatchWrite,
  ListOptions,
  ListPage,
  QueryResult,
  State,
  StateRecord,
  WriteOptions,
} from './state.js';
import { checkId, dataJson, mergedJson, planWrite, type WriteOp } from './write-plan.js';
import { appliedElsewhere, dataHash, idempotencyLimits, type IdempotencyLimits } from './idempotency.js';
import { WriteMethods } from './write-methods.js';
import { listIndexName, sqlTableNames } from './sql-table.js';
import { openSqlite, type SqlDatabase, type SqlStatement } from './sqlite-driver.js';
import { createTables } from './sqlite-tables.js';

/**
 * The `sqlite` state (WAL; the driver is node:sqlite or better-sqlite3, see sqlite-driver.ts): one table per state with the contract's columns
 * id, version, data (JSON text), created_at, updated_at, plus `seq` (an AUTOINCREMENT key that
 * gives insertion order for paging), and `<table>_idem` holding applied idempotency keys (key,
 * record id, version, hash; see idempotency.ts). A write and its idempotency key are stored in
 * one IMMEDIATE transaction. Statements are prepared once
 * and cached. The connection's settings and the DDL are sqlite-tables.ts.
 */

/** Options of a SQLite state. */
export interface SqliteStateOptions {
  alias: string;
  /** a file path, or ":memory:" */
  file: string;
  table: string;
  queries?: Readonly<Record<string, QuerySettings>>;
  log?: Logger;
  /** bytes of record data one list page holds (the first record always fits); default 4 MiB */
  maxPageBytes?: number;
  /** JSON values one record, and one list page, holds (the first record always fits); default 20,000 */
  maxValues?: number;
  /** how applied idempotency keys are kept (DEFAULT_IDEMPOTENCY) */
  idempotency?: Partial<IdempotencyLimits>;
}

/** An applied idempotency key as stored; `hash` is null for a delete (and for keys of 0.1). */
interface KeyRow {
  record_id: string;
  version: number;
  hash: string | null;
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
  private db: SqlDatabase | undefined;
  private readonly stmts = new Map<string, SqlStatement>();
  private readonly compiled = new Map<string, CompiledQuery>();
  private txWrite:
    ((op: WriteOp, id: string, data: string | undefined, o: WriteOptions | undefined) => StateRecord) | undefined;
  private txBatch: ((writes: readonly BatchWrite[]) => BatchOutcome[]) | undefined;
  private writesSincePrune = 0;
  private readonly idemLimits: IdempotencyLimits;
  private readonly maxPageBytes: number;
  private readonly maxValues: number;
  private checkpointer: Checkpointer | undefined;

  constructor(options: SqliteStateOptions) {
    super();
    this.idemLimits = idempotencyLimits(options.idempotency);
    this.maxPageBytes = options.maxPageBytes ?? DEFAULT_MAX_PAGE_BYTES;
    this.maxValues = options.maxValues ?? DEFAULT_MAX_RECORD_VALUES;
    ({ t: this.t, ti: this.ti } = sqlTableNames(options.table, MAX_TABLE));
    this.options = options;
    this.alias = options.alias;
  }

  async init(): Promise<void> {
    if (this.db) return;
    const file = this.options.file;
    let db: SqlDatabase;
    try {
      // a fresh checkout has no data folder yet: make it, as the user would expect
      if (file !== ':memory:' && file !== '') await mkdir(dirname(file), { recursive: true });
      db = await openSqlite(file);
    } catch (err) {
      throw new SagawayError('STATE_UNAVAILABLE', `state "${this.alias}": cannot open its database file`, {
        cause: err,
      });
    }
    try {
      createTables(db, { table: this.options.table, t: this.t, ti: this.ti });
    } catch (err) {
      db.close();
      throw new SagawayError('STATE_UNAVAILABLE', `state "${this.alias}": cannot open its database`, { cause: err });
    }
    if (file !== ':memory:' && file !== '') this.checkpointer = startCheckpointerLater(file, db, this.options.log);
    this.db = db;
    this.txWrite = db.immediate((op: WriteOp, id: string, data: string | undefined, o: WriteOptions | undefined) =>
      this.writeInTx(op, id, data, o),
    );
    this.txBatch = db.immediate((writes: readonly BatchWrite[]) => writes.map((w) => this.batchedWrite(w)));
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
    const inner =
      // octet_length of a column reads the stored size, not the text (SQLite 3.43+)
      `SELECT seq, id, version, octet_length(data) AS _n, ${sortExpr} AS _sk, ${sortExpr} AS _o FROM ${this.t}` +
      (where.length ? ` WHERE ${where.join(' AND ')}` : '') +
      ` ORDER BY ${orderBy} LIMIT ? OFFSET ?`;
    const sql = withPageBudget(inner, o, 'seq, id, version, _sk', this.t, this.maxPageBytes);
    const rows = this.stmt(sql).all(...params) as RowData[];
    // counted on the text, before JSON.parse: the rows cut are never parsed
    const trimmed = trimPage(rows, o.limit);
    const more = cutPageByValues(rows, this.maxValues, (r, max) => countJsonValues(r.data, max)) || trimmed;
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
    let stmt: SqlStatement;
    try {
      stmt = this.stmt(compiled.text);
    } catch (err) {
      throw queryFailed(this.alias, name, err);
    }
    try {
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
    const checkpointer = this.checkpointer;
    this.checkpointer = undefined;
    await checkpointer?.stop();
    db?.close();
  }

  protected async write(
    op: WriteOp,
    id: string,
    data: Record<string, unknown> | undefined,
    options?: WriteOptions,
  ): Promise<StateRecord> {
    checkId(id);
    const json = data === undefined ? undefined : dataJson(data, this.maxValues);
    this.handle();
    let result: StateRecord;
    try {
      result = (this.txWrite as NonNullable<typeof this.txWrite>)(op, id, json, options);
    } catch (err) {
      if (err instanceof SagawayError) throw err;
      throw new SagawayError('STATE_UNAVAILABLE', `state "${this.alias}": write failed`, { cause: err });
    }
    // after the commit, in its own short statement: a write never waits for a whole prune
    if (options?.idempotencyKey !== undefined && ++this.writesSincePrune >= this.idemLimits.pruneEvery) {
      try {
        this.prune();
      } catch (err) {
        this.options.log?.warn({ err, state: this.alias }, 'pruning idempotency keys failed');
      }
    }
    return result;
  }

  /** The list index on `fields` (list() filters them as `json_extract(data, '$.f')`, ordered by seq). */
  async ensureIndex(fields: readonly string[]): Promise<void> {
    const cols = fields.map((f) => `json_extract(data, '$.${f}')`);
    const name = listIndexName(this.options.table, fields);
    try {
      this.handle().exec(`CREATE INDEX IF NOT EXISTS ${name} ON ${this.t} (${[...cols, 'seq'].join(', ')})`);
    } catch (err) {
      throw new SagawayError('STATE_UNAVAILABLE', `state "${this.alias}": cannot create an index`, { cause: err });
    }
  }

  /**
   * Group commit (states/group-commit.ts): the writes in one IMMEDIATE transaction, one commit.
   * A write that breaks a rule throws before it changes anything (writeInTx checks first, and a
   * create without a key is one statement), so catching it here leaves the others to commit.
   */
  async writeBatch(writes: readonly BatchWrite[]): Promise<BatchOutcome[]> {
    this.handle();
    try {
      return (this.txBatch as NonNullable<typeof this.txBatch>)(writes);
    } catch (err) {
      throw new SagawayError('STATE_UNAVAILABLE', `state "${this.alias}": write failed`, { cause: err });
    }
  }

  private batchedWrite(w: BatchWrite): BatchOutcome {
    try {
      checkId(w.id);
      const o = w.expectedVersion !== undefined ? { expectedVersion: w.expectedVersion } : undefined;
      return { ok: true, record: this.writeInTx(w.op, w.id, dataJson(w.data, this.maxValues), o) };
    } catch (err) {
      if (err instanceof SagawayError) return { ok: false, error: err };
      // not a rule of the contract (the database failed): the transaction fails as a whole
      throw err;
    }
  }

  /** Runs inside an IMMEDIATE transaction: nothing else writes between the read and the write. */
  private writeInTx(op: WriteOp, id: string, json: string | undefined, o: WriteOptions | undefined): StateRecord {
    const key = o?.idempotencyKey;
    if (op === 'create' && json !== undefined && o?.expectedVersion === undefined)
      return this.createInTx(id, json, key);
    if (key !== undefined) {
      const done = this.appliedKey(key);
      if (done) return this.replay(done);
    }
    const row = this.stmt(`SELECT id, version, data FROM ${this.t} WHERE id = ?`).get(id) as RowData | undefined;
    const data = json === undefined ? undefined : (JSON.parse(json) as Record<string, unknown>);
    const plan = planWrite(op, id, row ? toRecord(row) : undefined, data, o);
    const now = new Date().toISOString();
    const r = plan.record;
    let text: string | undefined;
    if (plan.kind === 'insert') {
      text = op === 'update' ? mergedJson(r.data, this.maxValues) : (json ?? '{}');
      this.stmt(`INSERT INTO ${this.t} (id, version, data, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`).run(
        id,
        r.version,
        text,
        now,
        now,
      );
    } else if (plan.kind === 'update') {
      text = op === 'update' ? mergedJson(r.data, this.maxValues) : (json ?? '{}');
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
      this.stmt(`INSERT INTO ${this.ti} (key, record_id, version, hash, created_at) VALUES (?, ?, ?, ?, ?)`).run(
        key,
        id,
        r.version,
        text === undefined ? null : dataHash(text),
        Date.now(),
      );
    }
    return r;
  }

  private appliedKey(key: string): KeyRow | undefined {
    return this.stmt(`SELECT record_id, version, hash FROM ${this.ti} WHERE key = ?`).get(key) as KeyRow | undefined;
  }

  /**
   * The answer to a redelivery (see idempotency.ts): the record read back when it still holds
   * what that write stored (same version, same hash of its text), else `{ id, version, data: {} }`.
   */
  private replay(done: KeyRow): StateRecord {
    if (done.hash !== null) {
      const row = this.stmt(`SELECT id, version, data FROM ${this.t} WHERE id = ?`).get(done.record_id) as
        RowData | undefined;
      if (row && row.version === done.version && dataHash(row.data) === done.hash) return toRecord(row);
    }
    return appliedElsewhere(done.record_id, done.version);
  }

  /**
   * The hot path of write.Create in two statements: claim the key (storing the result it will
   * have), then insert; a taken id throws, which rolls the claim back with the transaction.
   */
  private createInTx(id: string, json: string, key: string | undefined): StateRecord {
    if (key !== undefined) {
      const claim = this.stmt(
        `INSERT INTO ${this.ti} (key, record_id, version, hash, created_at) VALUES (?, ?, 1, ?, ?) ON CONFLICT (key) DO NOTHING`,
      ).run(key, id, dataHash(json), Date.now());
      if (claim.changes === 0) return this.replay(this.appliedKey(key) as KeyRow);
    }
    const now = new Date().toISOString();
    const ins = this.stmt(
      `INSERT INTO ${this.t} (id, version, data, created_at, updated_at) VALUES (?, 1, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
    ).run(id, json, now, now);
    if (ins.changes === 0) throw new SagawayError('RECORD_EXISTS', 'record already exists');
    return { id, version: 1, data: JSON.parse(json) as Record<string, unknown> };
  }

  /**
   * One bounded pass: of the `pruneBatch` oldest keys (rowid order is insertion order), delete
   * those past the retention or beyond the newest `maxKeys`. The inner LIMIT bounds the rows
   * read, so a table full of young keys costs one small index walk, not a scan.
   */
  private prune(): void {
    this.writesSincePrune = 0;
    const { pruneBatch, retentionMs, maxKeys } = this.idemLimits;
    this.stmt(
      `DELETE FROM ${this.ti} WHERE rowid IN (SELECT r FROM (SELECT rowid AS r, created_at AS c FROM ${this.ti} ORDER BY rowid LIMIT ?)` +
        ` WHERE c < ? OR r <= (SELECT max(rowid) FROM ${this.ti}) - ?)`,
    ).run(pruneBatch, Date.now() - retentionMs, maxKeys);
  }

  private handle(): SqlDatabase {
    if (!this.db) throw new SagawayError('STATE_UNAVAILABLE', `state "${this.alias}" is not open`);
    return this.db;
  }

  private stmt(sql: string): SqlStatement {
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
