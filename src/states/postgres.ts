import { countValues, DEFAULT_MAX_RECORD_VALUES } from '../core/json-values.js';
import { SagawayError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { QuerySettings } from '../config/settings.js';
import { decodeCursor, nextOf } from './cursor.js';
import { DEFAULT_MAX_PAGE_BYTES, normalizeList, type FilterValue } from './list-options.js';
import { bindValues, compileNamedQuery, type CompiledQuery } from './named-params.js';
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
import { postgresBatch } from './postgres-batch.js';
import { checkId, dataJson, planWrite, type WriteOp } from './write-plan.js';
import { appliedElsewhere, idempotencyLimits, type IdempotencyLimits } from './idempotency.js';
import { WriteMethods } from './write-methods.js';
import { sqlTableNames } from './sql-table.js';
import type { PoolClient, QueryResult as PgResult, QueryResultRow } from 'pg';
import { PostgresPool } from './postgres-pool.js';
import { createListIndex, createTables, type PostgresTables } from './postgres-tables.js';

/**
 * The `postgres` state (`pg` pool): one table per state (id, version, data JSONB, created_at,
 * updated_at, plus `seq` for insertion order), created if missing, and `<table>_idem` for applied
 * idempotency keys (key, record id, version, hash, `n` for insertion order; see idempotency.ts).
 * A write locks its row (SELECT ... FOR UPDATE) and stores its idempotency key in the same
 * transaction.
 *
 * The DDL (tables, migration, list indexes) is postgres-tables.ts; the pool, and how outages
 * become STATE_UNAVAILABLE (503, retryable), postgres-pool.ts.
 */

/** Options of a PostgreSQL state. */
export interface PostgresStateOptions {
  alias: string;
  url: string;
  table: string;
  /** default 10 */
  poolSize?: number;
  queries?: Readonly<Record<string, QuerySettings>>;
  log?: Logger;
  /** how long to wait for a connection; default 5 s */
  connectTimeoutMs?: number;
  /** server-side limit of one statement (`statement_timeout`); default 30 s */
  statementTimeoutMs?: number;
  /** bytes of record data one list page holds (the first record always fits); default 4 MiB */
  maxPageBytes?: number;
  /** JSON values one record, and one list page, holds (the first record always fits); default 20,000 */
  maxValues?: number;
  /** how applied idempotency keys are kept (DEFAULT_IDEMPOTENCY) */
  idempotency?: Partial<IdempotencyLimits>;
}

/**
 * The hash of a stored record's data, computed by the server from its canonical jsonb text, so
 * that the write and a later read back hash the same text. `%s` is the jsonb expression.
 */
const HASH_SQL = "encode(sha256(convert_to((%s)::text, 'UTF8')), 'base64')";
const hashOf = (expr: string): string => HASH_SQL.replace('%s', expr);

/** An applied key joined with its record when that still holds what the write stored. */
interface ReplayRow {
  record_id: string;
  version: number;
  id: string | null;
  data: Record<string, unknown> | null;
}

/** 63 characters at most in PostgreSQL, minus the longest suffix used (`_idem_at`, the index of 0.1 tables that is dropped). */
const MAX_TABLE = 55;
const MAX_QUERY_ROWS = 1000;

interface RowData {
  id: string;
  version: number;
  data: Record<string, unknown>;
  _sk?: unknown;
}

/** A state in a PostgreSQL table. */
export class PostgresState extends WriteMethods implements State {
  readonly alias: string;
  readonly kind = 'postgres' as const;
  private readonly options: PostgresStateOptions;
  private readonly t: string;
  private readonly ti: string;
  /** the connections (postgres-pool.ts) */
  private readonly db: PostgresPool;
  private ready = false;
  private readonly compiled = new Map<string, CompiledQuery>();
  private writesSincePrune = 0;
  private readonly idemLimits: IdempotencyLimits;
  private readonly maxPageBytes: number;
  private readonly maxValues: number;
  /** the table names, for the DDL (postgres-tables.ts) */
  private readonly tables: PostgresTables;

  constructor(options: PostgresStateOptions) {
    super();
    this.idemLimits = idempotencyLimits(options.idempotency);
    this.maxPageBytes = options.maxPageBytes ?? DEFAULT_MAX_PAGE_BYTES;
    this.maxValues = options.maxValues ?? DEFAULT_MAX_RECORD_VALUES;
    ({ t: this.t, ti: this.ti } = sqlTableNames(options.table, MAX_TABLE));
    this.tables = { table: options.table, t: this.t, ti: this.ti };
    this.db = new PostgresPool(options.alias, options);
    this.options = options;
    this.alias = options.alias;
  }

  async init(): Promise<void> {
    if (this.ready) return;
    // init() may be called again after a failure (server down at start): the pool is made once
    await this.db.open();
    await createTables(this.db, this.tables);
    await this.prune();
    this.ready = true;
  }

  async get(id: string): Promise<StateRecord | undefined> {
    const r = await this.run<RowData>(`SELECT id, version, data FROM ${this.t} WHERE id = $1`, [id]);
    const row = r.rows[0];
    return row ? toRecord(row) : undefined;
  }

  async list(options?: ListOptions): Promise<ListPage> {
    const o = normalizeList(options);
    const after = o.after === undefined ? undefined : decodeCursor(o.after, o.sortKey);
    const params: unknown[] = [];
    const bind = (v: unknown): string => `$${params.push(v)}`;
    // missing fields sort as JSON null, so keys are never SQL NULL and row comparison is total
    const field = (f: string): string => `COALESCE(data->'${f}', 'null'::jsonb)`;
    const dialect: SqlDialect = {
      sortExpr: (f) => (f === 'id' ? 'id' : field(f)),
      equals: (f: string, v: FilterValue) =>
        f === 'id' ? `id = ${bind(v === null ? null : String(v))}` : `${field(f)} = ${bind(JSON.stringify(v))}::jsonb`,
      bind,
      bindKey: (f, k) => (f === 'id' ? bind(k) : `${bind(k)}::jsonb`),
      nullableKeys: false,
      seq: 'seq',
    };
    const { where, orderBy, sortExpr } = listClauses(o, after, dialect);
    // the jsonb key travels in the cursor as its exact text, so big numbers survive the round trip
    const skSelect = o.field === undefined ? 'seq::float8' : o.field === 'id' ? 'id' : `${sortExpr}::text`;
    const inner =
      // the size of the data as JSON text in bytes; rows past the budget come back without data
      `SELECT id, version, octet_length(data::text) AS _n, ${skSelect} AS _sk, ${sortExpr} AS _o FROM ${this.t}` +
      (where.length ? ` WHERE ${where.join(' AND ')}` : '') +
      ` ORDER BY ${orderBy} LIMIT ${bind(o.limit + 1)} OFFSET ${bind(o.skip)}`;
    const sql = withPageBudget(inner, o, 'id, version, _sk', this.t, this.maxPageBytes);
    const r = await this.run<RowData>(sql, params);
    const rows = r.rows;
    const trimmed = trimPage(rows, o.limit);
    const more = cutPageByValues(rows, this.maxValues, (row, max) => countValues(row.data, max)) || trimmed;
    const page: ListPage = { list: rows.map(toRecord) };
    const last = rows[rows.length - 1];
    const next = nextOf(o, more, last && { key: last._sk as string | number, id: last.id });
    if (next !== undefined) page.next = next;
    return page;
  }

  async query(name: string, bindings: Record<string, unknown>): Promise<QueryResult> {
    const queries = this.options.queries ?? {};
    const q = Object.hasOwn(queries, name) ? queries[name] : undefined;
    if (!q?.sql) throw new SagawayError('QUERY_NOT_FOUND', `state "${this.alias}" has no query "${name}"`);
    let compiled = this.compiled.get(name);
    if (!compiled) {
      compiled = compileNamedQuery(q.sql, 'postgres');
      this.compiled.set(name, compiled);
    }
    const values = bindValues(compiled.names, bindings);
    let rows: unknown[];
    try {
      rows = (await this.run(compiled.text, values)).rows;
    } catch (err) {
      if (err instanceof SagawayError && err.code === 'STATE_UNAVAILABLE') throw err;
      const cause = err instanceof SagawayError ? err.cause : err;
      const sqlstate = (cause as { code?: unknown } | undefined)?.code;
      // class 22 = data exception: the input did not fit the query (e.g. "abc" for an integer)
      if (typeof sqlstate === 'string' && sqlstate.startsWith('22')) {
        throw new SagawayError('VALIDATION_FAILED', `query "${name}": a parameter has the wrong type`, { cause });
      }
      throw new SagawayError('QUERY_FAILED', `query "${name}" of state "${this.alias}" failed`, { cause });
    }
    if (rows.length > MAX_QUERY_ROWS) {
      this.options.log?.warn({ state: this.alias, query: name }, `query result cut at ${MAX_QUERY_ROWS} rows`);
      rows = rows.slice(0, MAX_QUERY_ROWS);
    }
    return { list: rows };
  }

  /** The list index on `fields` (postgres-tables.ts). */
  async ensureIndex(fields: readonly string[], sort?: string): Promise<void> {
    await createListIndex(this.db, this.tables, fields, sort);
  }

  /** Group commit: the whole batch in one statement, one transaction (postgres-batch.ts). */
  writeBatch(writes: readonly BatchWrite[]): Promise<BatchOutcome[]> {
    return postgresBatch(this.t, writes, (sql, params) => this.run(sql, params));
  }

  async ping(): Promise<void> {
    await this.run('SELECT 1');
  }

  async close(): Promise<void> {
    this.ready = false;
    await this.db.close();
  }

  protected async write(
    op: WriteOp,
    id: string,
    data: Record<string, unknown> | undefined,
    options?: WriteOptions,
  ): Promise<StateRecord> {
    checkId(id);
    const json = data === undefined ? undefined : dataJson(data, this.maxValues);
    const key = options?.idempotencyKey;
    const result =
      op === 'create' && json !== undefined
        ? await this.createFast(id, json, key)
        : await this.writeInTx(op, id, json, options);
    if (key !== undefined && ++this.writesSincePrune >= this.idemLimits.pruneEvery) {
      this.prune().catch((err: unknown) =>
        this.options.log?.warn({ err, state: this.alias }, 'pruning idempotency keys failed'),
      );
    }
    return result;
  }

  /**
   * create in one statement (one round trip, autocommit): the hot path of write.Create.
   * With a key, the key row is claimed first (a concurrent delivery of the same key waits on it,
   * then does nothing) and the record is inserted only when the claim succeeded. When the id is
   * taken, the claim must not survive: dividing by zero aborts the whole statement, claim
   * included, and is reported as RECORD_EXISTS.
   */
  private async createFast(id: string, json: string, key: string | undefined): Promise<StateRecord> {
    const record = (): StateRecord => ({ id, version: 1, data: JSON.parse(json) as Record<string, unknown> });
    if (key === undefined) {
      const r = await this.run(
        `INSERT INTO ${this.t} (id, version, data) VALUES ($1, 1, $2::jsonb) ON CONFLICT (id) DO NOTHING`,
        [id, json],
      );
      if (r.rowCount === 0) throw exists();
      return record();
    }
    let claimed: number | undefined;
    try {
      const r = await this.run<{ claimed: number }>(
        `WITH claim AS (INSERT INTO ${this.ti} (key, record_id, version, hash) VALUES ($3, $1, 1, ${hashOf('$2::jsonb')})` +
          ` ON CONFLICT (key) DO NOTHING RETURNING key),` +
          ` ins AS (INSERT INTO ${this.t} (id, version, data) SELECT $1, 1, $2::jsonb FROM claim ON CONFLICT (id) DO NOTHING RETURNING id)` +
          ` SELECT (SELECT count(*) FROM claim)::int AS claimed,` +
          ` CASE WHEN (SELECT count(*) FROM claim) = 1 THEN 1 / (SELECT count(*) FROM ins)::int ELSE 0 END AS ok`,
        [id, json, key],
      );
      claimed = r.rows[0]?.claimed;
    } catch (err) {
      if (err instanceof SagawayError && (err.cause as { code?: string } | undefined)?.code === '22012') throw exists();
      throw err;
    }
    if (claimed === 1) return record();
    const prior = await this.run<ReplayRow>(this.replaySql(), [key]);
    const first = replayed(prior.rows[0]);
    if (first) return first;
    // the key row vanished in between (pruned): apply the write through the general path
    return this.writeInTx('create', id, json, { idempotencyKey: key });
  }

  /**
   * Any write in a transaction with the row locked: BEGIN; claim the key and lock the row (one
   * statement); write and store the result (one statement); COMMIT.
   */
  private writeInTx(op: WriteOp, id: string, json: string | undefined, options?: WriteOptions): Promise<StateRecord> {
    const key = options?.idempotencyKey;
    return this.transaction(async (c) => {
      let cur: RowData | undefined;
      if (key !== undefined) {
        // the key row is inserted first: a second delivery of the same step waits here for the
        // first one's transaction, then finds its result
        const r = await c.query<RowData & { claimed: number }>(
          `WITH claim AS (INSERT INTO ${this.ti} (key) VALUES ($1) ON CONFLICT (key) DO NOTHING RETURNING key)` +
            ` SELECT (SELECT count(*) FROM claim)::int AS claimed, r.id, r.version, r.data` +
            ` FROM (SELECT 1) one LEFT JOIN LATERAL (SELECT id, version, data FROM ${this.t} WHERE id = $2 FOR UPDATE) r ON true`,
          [key, id],
        );
        const head = r.rows[0];
        if (head?.claimed === 0) {
          const first = replayed((await c.query<ReplayRow>(this.replaySql(), [key])).rows[0]);
          if (first) return first;
        }
        cur = head?.id == null ? undefined : head;
      } else {
        const r = await c.query<RowData>(`SELECT id, version, data FROM ${this.t} WHERE id = $1 FOR UPDATE`, [id]);
        cur = r.rows[0];
      }
      const parsed = json === undefined ? undefined : (JSON.parse(json) as Record<string, unknown>);
      const plan = planWrite(op, id, cur ? toRecord(cur) : undefined, parsed, options);
      const r = plan.record;
      // the key's record id, version and hash are stored by the same statement as the write
      // ($1 is the id, $2 the version, $3 the data: the hash is of the jsonb as stored)
      const remember = (at: number, hash: string): string =>
        key === undefined
          ? ''
          : `, k AS (UPDATE ${this.ti} SET record_id = $1, version = $2, hash = ${hash} WHERE key = $${at} RETURNING key)`;
      const extra = key === undefined ? [] : [key];
      if (plan.kind === 'insert') {
        try {
          await c.query(
            `WITH w AS (INSERT INTO ${this.t} (id, version, data) VALUES ($1, $2, $3::jsonb) RETURNING id)${remember(4, hashOf('$3::jsonb'))} SELECT 1`,
            [id, r.version, JSON.stringify(r.data), ...extra],
          );
        } catch (err) {
          // a concurrent create of the same id won the race
          if ((err as { code?: string }).code === '23505') throw exists();
          throw err;
        }
      } else if (plan.kind === 'update') {
        await c.query(
          `WITH w AS (UPDATE ${this.t} SET version = $2, data = $3::jsonb, updated_at = now() WHERE id = $1 RETURNING id)${remember(4, hashOf('$3::jsonb'))} SELECT 1`,
          [id, r.version, JSON.stringify(r.data), ...extra],
        );
      } else {
        // a delete leaves no data: no hash; $2 is the version it deleted
        await c.query(
          `WITH w AS (DELETE FROM ${this.t} WHERE id = $1 RETURNING id)${remember(3, 'NULL')} SELECT $2::int`,
          [id, r.version, ...extra],
        );
      }
      return r;
    });
  }

  /**
   * The applied key `$1` joined with its record when that is still at the version written and
   * hashes the same (see idempotency.ts): `id` is null when the record has changed since.
   */
  private replaySql(): string {
    return (
      `SELECT k.record_id, k.version, r.id, r.data FROM ${this.ti} k LEFT JOIN ${this.t} r` +
      ` ON r.id = k.record_id AND r.version = k.version AND k.hash IS NOT NULL AND ${hashOf('r.data')} = k.hash` +
      ` WHERE k.key = $1`
    );
  }

  /**
   * One bounded pass: of the `pruneBatch` oldest keys (by `n`, a sequence), delete those past
   * the retention or beyond the newest `maxKeys`. The inner LIMIT bounds the rows read; `n` has
   * gaps (rolled-back claims), so the bound may remove a few more keys than needed, never fewer.
   */
  private async prune(): Promise<void> {
    this.writesSincePrune = 0;
    const { pruneBatch, retentionMs, maxKeys } = this.idemLimits;
    await this.run(
      `DELETE FROM ${this.ti} WHERE n IN (SELECT o.n FROM (SELECT n, created_at FROM ${this.ti} ORDER BY n LIMIT $1) o` +
        ` WHERE o.created_at < now() - ($2::bigint * interval '1 millisecond') OR o.n <= (SELECT max(n) FROM ${this.ti}) - $3)`,
      [pruneBatch, retentionMs, maxKeys],
    );
  }

  /** One statement on any pooled connection (postgres-pool.ts). */
  private run<R extends QueryResultRow = QueryResultRow>(sql: string, params?: unknown[]): Promise<PgResult<R>> {
    return this.db.run<R>(sql, params);
  }

  /** BEGIN ... COMMIT on one connection (postgres-pool.ts). */
  private transaction<T>(fn: (client: PoolClient) => Promise<T>): Promise<T> {
    return this.db.transaction(fn);
  }
}

function exists(): SagawayError {
  return new SagawayError('RECORD_EXISTS', 'record already exists');
}

/** The answer from a replay row; undefined when the key row is gone (pruned in between). */
function replayed(row: ReplayRow | undefined): StateRecord | undefined {
  if (!row || row.record_id === null) return undefined;
  if (row.id !== null && row.data !== null) return { id: row.id, version: row.version, data: row.data };
  return appliedElsewhere(row.record_id, row.version);
}

function toRecord(row: RowData): StateRecord {
  return { id: row.id, version: row.version, data: row.data };
}
