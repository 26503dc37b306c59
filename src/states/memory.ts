import { countValues, DEFAULT_MAX_RECORD_VALUES } from '../core/json-values.js';
import { SagawayError } from '../core/errors.js';
import type { QuerySettings } from '../config/settings.js';
import { decodeCursor, nextOf } from './cursor.js';
import { DEFAULT_MAX_PAGE_BYTES, normalizeList, type FilterValue } from './list-options.js';
import { cutPageByValues } from './sql-list.js';
import type { ListOptions, ListPage, QueryResult, State, StateRecord, WriteOptions } from './state.js';
import { checkId, dataJson, planWrite, type WriteOp } from './write-plan.js';
import {
  DEFAULT_MEMORY_IDEMPOTENCY,
  appliedElsewhere,
  idempotencyLimits,
  type IdempotencyLimits,
} from './idempotency.js';
import { WriteMethods } from './write-methods.js';

/**
 * The `memory` state: records in a Map, gone when the process ends. Stored data is a private
 * copy and every read returns a fresh copy, so a caller mutating a record (or the payload it
 * came from) never changes the store behind its back.
 */

interface Row {
  seq: number;
  version: number;
  data: Record<string, unknown>;
  /** bytes of `data` as JSON text, measured when a list first needs it (a write makes a new row) */
  size?: number;
  /** JSON values of `data`, counted when a list first needs it */
  values?: number;
}

/** Options of a memory state. */
export interface MemoryStateOptions {
  alias: string;
  queries?: Readonly<Record<string, QuerySettings>>;
  /** bytes of record data one list page holds (the first record always fits); default 4 MiB */
  maxPageBytes?: number;
  /** JSON values one record, and one list page, holds (the first record always fits); default 20,000 */
  maxValues?: number;
  /** how applied idempotency keys are kept (DEFAULT_MEMORY_IDEMPOTENCY) */
  idempotency?: Partial<IdempotencyLimits>;
}

/**
 * An applied idempotency key: the record, the version written and the row's `seq`, 0 for a
 * delete. seq numbers are never reused, and nothing but a write changes a memory record (there
 * is no SQL), so the same seq and version mean the same data: no hash is needed here.
 */
interface AppliedKey {
  at: number;
  id: string;
  version: number;
  seq: number;
}

const MAX_QUERY_ROWS = 1000;

/** A state kept in process memory. */
export class MemoryState extends WriteMethods implements State {
  readonly alias: string;
  readonly kind = 'memory' as const;
  private readonly rows = new Map<string, Row>();
  private readonly idem = new Map<string, AppliedKey>();
  private readonly idemLimits: IdempotencyLimits;
  private readonly queries: Readonly<Record<string, QuerySettings>>;
  private seq = 0;
  private writesSincePrune = 0;
  private closed = false;
  private readonly maxPageBytes: number;
  private readonly maxValues: number;

  constructor(options: MemoryStateOptions) {
    super();
    this.maxPageBytes = options.maxPageBytes ?? DEFAULT_MAX_PAGE_BYTES;
    this.maxValues = options.maxValues ?? DEFAULT_MAX_RECORD_VALUES;
    this.alias = options.alias;
    this.queries = options.queries ?? {};
    this.idemLimits = idempotencyLimits(options.idempotency, DEFAULT_MEMORY_IDEMPOTENCY);
  }

  async init(): Promise<void> {}

  async get(id: string): Promise<StateRecord | undefined> {
    this.open();
    const row = this.rows.get(id);
    return row ? toRecord(id, row) : undefined;
  }

  async list(options?: ListOptions): Promise<ListPage> {
    this.open();
    const o = normalizeList(options);
    const after = o.after === undefined ? undefined : decodeCursor(o.after, o.sortKey);
    const field = o.field;
    const dir = o.desc ? -1 : 1;
    const want = o.skip + o.limit + 1;
    let rows: [string, Row][] = [];
    if (field === undefined) {
      // the Map iterates in insertion order, which is seq order: stop once the page is full
      const min = after ? (after.key as number) : 0;
      for (const entry of this.rows) {
        if (entry[1].seq <= min || !matches(entry[0], entry[1], o.filter)) continue;
        rows.push(entry);
        if (rows.length >= want) break;
      }
    } else {
      for (const entry of this.rows) if (matches(entry[0], entry[1], o.filter)) rows.push(entry);
      rows.sort((a, b) => dir * (compareValues(sortValue(a, field), sortValue(b, field)) || compareIds(a[0], b[0])));
      if (after) {
        rows = rows.filter(
          (r) => dir * (compareValues(sortValue(r, field), after.key) || compareIds(r[0], after.id)) > 0,
        );
      }
    }
    const page = rows.slice(o.skip, want);
    const fitted = fitPage(page, o.limit, this.maxPageBytes);
    const more = cutPageByValues(page, this.maxValues, ([, row]) => (row.values ??= countValues(row.data))) || fitted;
    const result: ListPage = { list: page.map(([id, row]) => toRecord(id, row)) };
    const last = page[page.length - 1];
    const next = nextOf(
      o,
      more,
      last && { key: field === undefined ? last[1].seq : sortValue(last, field), id: last[0] },
    );
    if (next !== undefined) result.next = next;
    return result;
  }

  async query(name: string, bindings: Record<string, unknown>): Promise<QueryResult> {
    this.open();
    const q = Object.hasOwn(this.queries, name) ? this.queries[name] : undefined;
    if (!q?.filter) throw new SagawayError('QUERY_NOT_FOUND', `state "${this.alias}" has no query "${name}"`);
    const filter: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(q.filter)) {
      // a value ":name" is a parameter bound from the input, like :name in SQL
      if (typeof value === 'string' && /^:[A-Za-z_][A-Za-z0-9_]*$/.test(value)) {
        const param = value.slice(1);
        if (!Object.hasOwn(bindings, param) || bindings[param] === undefined) {
          throw new SagawayError('VALIDATION_FAILED', `query parameter "${param}" is missing from the input`);
        }
        filter[key] = bindings[param];
      } else filter[key] = value;
    }
    const o = normalizeList({ filter });
    const list: StateRecord[] = [];
    for (const [id, row] of this.rows) {
      if (!matches(id, row, o.filter)) continue;
      list.push(toRecord(id, row));
      if (list.length >= MAX_QUERY_ROWS) break;
    }
    return { list };
  }

  async ping(): Promise<void> {
    this.open();
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  protected async write(
    op: WriteOp,
    id: string,
    data: Record<string, unknown> | undefined,
    options?: WriteOptions,
  ): Promise<StateRecord> {
    this.open();
    checkId(id);
    const key = options?.idempotencyKey;
    if (key !== undefined) {
      const done = this.idem.get(key);
      if (done) return this.replay(done);
    }
    // a private deep copy, made before deciding anything so that a bad value changes nothing
    const copy =
      data === undefined ? undefined : (JSON.parse(dataJson(data, this.maxValues)) as Record<string, unknown>);
    const row = this.rows.get(id);
    const plan = planWrite(op, id, row ? { id, version: row.version, data: row.data } : undefined, copy, options);
    // a patch merged into the record may pass the limit that each write passed alone
    if (op === 'update' && plan.kind !== 'delete' && countValues(plan.record.data, this.maxValues) > this.maxValues) {
      throw new SagawayError('TOO_MANY_VALUES', `record data holds more than ${this.maxValues} JSON values`);
    }
    let seq = 0;
    if (plan.kind === 'delete') this.rows.delete(id);
    else {
      seq = row ? row.seq : ++this.seq;
      this.rows.set(id, { seq, version: plan.record.version, data: plan.record.data });
    }
    const result = structuredClone(plan.record);
    if (key !== undefined) this.remember(key, { at: Date.now(), id, version: plan.record.version, seq });
    return result;
  }

  /** The answer to a redelivery: the record if it is still as that write left it (see idempotency.ts). */
  private replay(done: AppliedKey): StateRecord {
    const row = this.rows.get(done.id);
    if (row && row.seq === done.seq && row.version === done.version) return toRecord(done.id, row);
    return appliedElsewhere(done.id, done.version);
  }

  private remember(key: string, applied: AppliedKey): void {
    this.idem.set(key, applied);
    // the bound is exact here: one key in, the oldest out (a Map iterates in insertion order)
    if (this.idem.size > this.idemLimits.maxKeys) {
      const oldest = this.idem.keys().next();
      if (!oldest.done) this.idem.delete(oldest.value);
    }
    if (++this.writesSincePrune >= this.idemLimits.pruneEvery) this.prune();
  }

  /** Drop expired keys, at most one batch: entries are in time order, so stop at the first to keep. */
  private prune(): void {
    this.writesSincePrune = 0;
    const cutoff = Date.now() - this.idemLimits.retentionMs;
    let budget = this.idemLimits.pruneBatch;
    for (const [key, entry] of this.idem) {
      if (entry.at >= cutoff || budget-- <= 0) break;
      this.idem.delete(key);
    }
  }

  private open(): void {
    if (this.closed) throw new SagawayError('STATE_UNAVAILABLE', `state "${this.alias}" is closed`);
  }
}

/**
 * Trim a page (fetched with one row of look-ahead) to `limit` rows and to `budget` bytes of
 * data (the first row always fits), before any row is copied; true when more rows follow.
 */
function fitPage(page: [string, Row][], limit: number, budget: number): boolean {
  let bytes = 0;
  for (let i = 0; i < page.length; i++) {
    if (i === limit) break;
    const row = page[i]![1];
    row.size ??= Buffer.byteLength(JSON.stringify(row.data), 'utf8');
    bytes += row.size;
    if (i > 0 && bytes > budget) {
      page.length = i;
      return true;
    }
  }
  if (page.length <= limit) return false;
  page.length = limit;
  return true;
}

function toRecord(id: string, row: Row): StateRecord {
  return { id, version: row.version, data: structuredClone(row.data) };
}

function matches(id: string, row: Row, filter: readonly [string, FilterValue][]): boolean {
  for (const [field, value] of filter) {
    const actual = field === 'id' ? id : Object.hasOwn(row.data, field) ? row.data[field] : undefined;
    if (value === null ? actual !== null && actual !== undefined : actual !== value) return false;
  }
  return true;
}

/** The sort value of a record, as a scalar (see cursorValue). */
function sortValue(entry: [string, Row], field: string): string | number | boolean | null {
  if (field === 'id') return entry[0];
  return cursorValue(Object.hasOwn(entry[1].data, field) ? entry[1].data[field] : undefined);
}

/** Objects and arrays sort as their JSON text (as in SQLite), so a cursor can carry the key. */
function cursorValue(value: unknown): string | number | boolean | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'object') return JSON.stringify(value);
  return value as string | number | boolean;
}

function rank(value: string | number | boolean | null): number {
  if (value === null) return 0;
  return typeof value === 'boolean' ? 1 : typeof value === 'number' ? 2 : 3;
}

/** A total order over sort values: missing/null < booleans < numbers < strings (and JSON text). */
export function compareValues(a: string | number | boolean | null, b: string | number | boolean | null): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (a === null || b === null) return 0;
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
