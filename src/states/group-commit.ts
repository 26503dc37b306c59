import { SagawayError } from '../core/errors.js';
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

/**
 * Group commit: the writes that concurrent callers make to one state are gathered and applied in
 * one transaction per tick (State.writeBatch), instead of one transaction — one commit, one
 * fsync, one round trip — each. The saga journal writes through it (runner/orchestrator/journal.ts).
 *
 * The guarantee of every write is unchanged: its promise resolves only after the transaction
 * holding it has committed, and with the same record or contract error (RECORD_EXISTS,
 * RECORD_NOT_FOUND, STALE_VERSION) as the write alone would give. One write failing does not fail
 * the others. When the whole transaction fails, a store that is down fails every write of it
 * (STATE_UNAVAILABLE); any other failure is retried write by write, so that each gets its own
 * answer.
 *
 * A tick: writes made while no batch is in flight are gathered until the event loop's next turn
 * (setImmediate), so all the runs that resumed in one turn commit together; writes made while a
 * batch is in flight wait for it and go in the next one. A batch holds each id once (a second
 * write of the same id waits for the next batch, keeping the order of writes per record).
 *
 * Writes with an idempotency key, deletes, and stores without writeBatch (memory) go straight
 * to the store. Reads are never delayed: they see what has been committed.
 */

/** Most writes in one transaction. */
export const MAX_BATCH = 256;
/**
 * Transactions in flight at once. One: the writes made while a transaction commits wait and go
 * together in the next. Measured with bench/profile-remote.mjs --form journal (50 connections):
 * one in flight gave batches of 33 writes on average, two gave 18 and no more throughput.
 */
export const MAX_IN_FLIGHT = 1;

interface Pending {
  write: BatchWrite;
  resolve(record: StateRecord): void;
  reject(err: unknown): void;
}

const wrapped = new WeakMap<State, GroupCommitState>();

/** A state whose writes are group-committed (one wrapper per state, shared by its users). */
export function groupCommit(state: State): State {
  // a memory write costs no round trip: nothing to gain
  if (state instanceof GroupCommitState || !state.writeBatch || state.kind === 'memory') return state;
  let g = wrapped.get(state);
  if (!g) {
    g = new GroupCommitState(state);
    wrapped.set(state, g);
  }
  return g;
}

/** See the module comment. */
export class GroupCommitState implements State {
  readonly alias: string;
  readonly kind: State['kind'];
  private queue: Pending[] = [];
  private inFlight = 0;
  private scheduled = false;
  private idle: (() => void)[] = [];
  /** transactions committed and writes they held (tests and metrics read them) */
  readonly stats = { batches: 0, writes: 0 };

  constructor(private readonly state: State) {
    this.alias = state.alias;
    this.kind = state.kind;
  }

  init(): Promise<void> {
    return this.state.init();
  }
  get(id: string): Promise<StateRecord | undefined> {
    return this.state.get(id);
  }
  list(options?: ListOptions): Promise<ListPage> {
    return this.state.list(options);
  }
  query(name: string, bindings: Record<string, unknown>): Promise<QueryResult> {
    return this.state.query(name, bindings);
  }
  ping(): Promise<void> {
    return this.state.ping();
  }
  async ensureIndex(fields: readonly string[], sort?: string): Promise<void> {
    await this.state.ensureIndex?.(fields, sort);
  }
  /** Waits for the writes already made, then closes the store. */
  async close(): Promise<void> {
    await this.drained();
    await this.state.close();
  }

  create(id: string, data: Record<string, unknown>, options?: WriteOptions): Promise<StateRecord> {
    return this.enqueue('create', id, data, options, false);
  }
  update(id: string, patch: Record<string, unknown>, options?: WriteOptions): Promise<StateRecord> {
    return this.enqueue('update', id, patch, options, true);
  }
  /**
   * update() when the caller needs only the new version: the merged data is not sent back by the
   * store (the record's `data` is the patch). The journal's hot path.
   */
  patch(id: string, patch: Record<string, unknown>, options?: WriteOptions): Promise<StateRecord> {
    return this.enqueue('update', id, patch, options, false);
  }
  set(id: string, data: Record<string, unknown>, options?: WriteOptions): Promise<StateRecord> {
    return this.enqueue('set', id, data, options, false);
  }
  upsert(id: string, data: Record<string, unknown>, options?: WriteOptions): Promise<StateRecord> {
    return this.enqueue('upsert', id, data, options, false);
  }
  delete(id: string, options?: WriteOptions): Promise<void> {
    return this.state.delete(id, options);
  }

  /** Resolves once every write made so far has been answered. */
  drained(): Promise<void> {
    if (this.inFlight === 0 && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private enqueue(
    op: BatchWrite['op'],
    id: string,
    data: Record<string, unknown>,
    options: WriteOptions | undefined,
    wantData: boolean,
  ): Promise<StateRecord> {
    if (options?.idempotencyKey !== undefined) return this.direct({ op, id, data }, options);
    const write: BatchWrite = {
      op,
      id,
      data,
      ...(options?.expectedVersion !== undefined ? { expectedVersion: options.expectedVersion } : {}),
      ...(wantData ? { wantData } : {}),
    };
    return new Promise<StateRecord>((resolve, reject) => {
      this.queue.push({ write, resolve, reject });
      this.schedule();
    });
  }

  /** One write through the store's own method (fallback, and writes that are never batched). */
  private direct(w: Pick<BatchWrite, 'op' | 'id' | 'data'>, options?: WriteOptions): Promise<StateRecord> {
    return this.state[w.op](w.id, w.data, options);
  }

  /**
   * Send a batch on the next tick (so that every write of this turn is in it), unless one is
   * already due or MAX_IN_FLIGHT transactions are committing (then their end sends the next).
   */
  private schedule(): void {
    if (this.scheduled || this.inFlight >= MAX_IN_FLIGHT || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  /** Commit one batch of the queued writes. */
  private async flush(): Promise<void> {
    const batch = this.take();
    if (batch.length === 0) return;
    this.inFlight++;
    try {
      const outcomes = await (this.state.writeBatch as NonNullable<State['writeBatch']>).call(
        this.state,
        batch.map((p) => p.write),
      );
      this.stats.batches++;
      this.stats.writes += batch.length;
      batch.forEach((p, i) => settle(p, outcomes[i]));
    } catch (err) {
      if (err instanceof SagawayError && err.code === 'STATE_UNAVAILABLE') {
        for (const p of batch) p.reject(err);
      } else {
        // the transaction failed as a whole (e.g. a value the database refused): each write
        // alone, so that only the faulty one fails
        await Promise.all(
          batch.map((p) =>
            this.direct(
              p.write,
              p.write.expectedVersion !== undefined ? { expectedVersion: p.write.expectedVersion } : undefined,
            ).then(p.resolve, p.reject),
          ),
        );
      }
    }
    this.inFlight--;
    // the next batch on the next tick: the runs just answered may add their next writes to it
    this.schedule();
    if (this.inFlight === 0 && this.queue.length === 0) for (const done of this.idle.splice(0)) done();
  }

  /** The next batch: queued writes in order, each id once, at most MAX_BATCH. */
  private take(): Pending[] {
    const batch: Pending[] = [];
    const rest: Pending[] = [];
    const ids = new Set<string>();
    for (const p of this.queue) {
      if (batch.length < MAX_BATCH && !ids.has(p.write.id)) {
        ids.add(p.write.id);
        batch.push(p);
      } else rest.push(p);
    }
    this.queue = rest;
    return batch;
  }
}

function settle(p: Pending, outcome: BatchOutcome | undefined): void {
  if (!outcome) p.reject(new SagawayError('STATE_UNAVAILABLE', 'the store gave no answer for a write'));
  else if (outcome.ok) p.resolve(outcome.record);
  else p.reject(outcome.error);
}
