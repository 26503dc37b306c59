/**
 * The state contract (DESIGN §6.8): a named store of records `{ id, version, data }` with
 * optimistic concurrency. `memory.ts`, `sqlite.ts` and `postgres.ts` implement it, and all of
 * them pass the one contract suite in `test/states/contract.ts`.
 */

/** One record. `version` starts at 1 and grows by one on every write. */
export interface StateRecord {
  id: string;
  version: number;
  data: Record<string, unknown>;
}

/** Options of a write. */
export interface WriteOptions {
  /** fail with STALE_VERSION unless the stored version equals this */
  expectedVersion?: number;
  /**
   * The same key applied twice has one effect: the second call returns the first call's result
   * without writing again (event steps pass `<sagaRunId>:<stepId>`).
   */
  idempotencyKey?: string;
}

/** Options of list(). */
export interface ListOptions {
  /** equality on data fields (top-level keys of `data`; `id` matches the record id) */
  filter?: Record<string, unknown>;
  /** a data field, `-field` for descending; default: insertion order */
  sort?: string;
  /** default 100, at most 1000 */
  limit?: number;
  skip?: number;
  /** a `next` returned by an earlier page: continue after it */
  after?: string;
  /**
   * Follow the end of the list (a feed that keeps polling): `next` is returned on every page,
   * also the last (the position after its last record), and an empty page returns `after`
   * again, so a stream keeps its place and sees records added later exactly once.
   */
  follow?: boolean;
}

/** One page of records; `next` is present while more records follow. */
export interface ListPage {
  list: StateRecord[];
  next?: string;
}

/** The result of a named query (`query.GetQuery`). */
export interface QueryResult {
  list: unknown[];
}

/** One write of a batch (State.writeBatch). */
export interface BatchWrite {
  op: 'create' | 'update' | 'set' | 'upsert';
  id: string;
  /** the data (create, set, upsert) or the patch (update) */
  data: Record<string, unknown>;
  expectedVersion?: number;
  /** whether the caller needs the stored data back (else `data` of the result may be the input) */
  wantData?: boolean;
}

/** The result of one write of a batch: its record, or the contract error it failed with. */
export type BatchOutcome = { ok: true; record: StateRecord } | { ok: false; error: Error };

export type StateKind = 'memory' | 'sqlite' | 'postgres';

/** A store of records. Every method may throw SagawayError with the codes named. */
export interface State {
  readonly alias: string;
  readonly kind: StateKind;
  /** create tables, open files; called once before first use */
  init(): Promise<void>;
  get(id: string): Promise<StateRecord | undefined>;
  list(options?: ListOptions): Promise<ListPage>;
  /** RECORD_EXISTS when the id is taken */
  create(id: string, data: Record<string, unknown>, options?: WriteOptions): Promise<StateRecord>;
  /** merge `patch` into data (shallow); RECORD_NOT_FOUND, STALE_VERSION */
  update(id: string, patch: Record<string, unknown>, options?: WriteOptions): Promise<StateRecord>;
  /** replace data; RECORD_NOT_FOUND, STALE_VERSION */
  set(id: string, data: Record<string, unknown>, options?: WriteOptions): Promise<StateRecord>;
  /** replace data, creating the record when missing; STALE_VERSION */
  upsert(id: string, data: Record<string, unknown>, options?: WriteOptions): Promise<StateRecord>;
  /** RECORD_NOT_FOUND, STALE_VERSION */
  delete(id: string, options?: WriteOptions): Promise<void>;
  /** run the named query with bound values; QUERY_NOT_FOUND */
  query(name: string, bindings: Record<string, unknown>): Promise<QueryResult>;
  /**
   * Optional: apply several writes in ONE transaction (group commit, states/group-commit.ts).
   * Each write succeeds or fails on its own (a failed one changes nothing and does not undo the
   * others); the promise resolves only once the transaction is committed. Writes must name
   * distinct ids and carry no idempotency key. Rejects only when the transaction as a whole
   * failed (then none of them was applied).
   */
  writeBatch?(writes: readonly BatchWrite[]): Promise<BatchOutcome[]>;
  /**
   * Optional: make list() with equality filters on these data fields, in insertion order, an
   * index scan rather than a table scan (SQL stores; created once, idempotent). Field names are
   * plain identifiers. With `sort` (a field), the index is ordered by that field and the id
   * instead: list() with these filters and `sort: sort` or `-sort` reads a range of it, in order.
   */
  ensureIndex?(fields: readonly string[], sort?: string): Promise<void>;
  /** throws STATE_UNAVAILABLE when the store cannot be reached (readiness) */
  ping(): Promise<void>;
  close(): Promise<void>;
}
