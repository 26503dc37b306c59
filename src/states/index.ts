import { SagawayError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { StateSettings } from '../config/settings.js';
import { MemoryState } from './memory.js';
import { seedState } from './seed.js';
import type {
  BatchOutcome,
  BatchWrite,
  ListOptions,
  ListPage,
  QueryResult,
  State,
  StateKind,
  StateRecord,
  WriteOptions,
} from './state.js';

/**
 * Make the state a configuration describes. The SQLite and PostgreSQL adapters (and their
 * drivers) are imported inside init(), so a process whose states are all `memory` never loads
 * better-sqlite3 or pg.
 */

/** The state contract's types, for callers of createState. */
export type { State, StateRecord, ListOptions, ListPage, WriteOptions, QueryResult } from './state.js';

/** A state for `settings`; call init() before use (it opens the store and loads the seed). */
export function createState(settings: StateSettings, log: Logger): State {
  return new ConfiguredState(settings, log);
}

/**
 * Delegates to the adapter once init() has opened it, and seeds an empty state. A store that
 * cannot be reached at start (STATE_UNAVAILABLE) is opened again on first use, so a process that
 * started while its database was down recovers without a restart.
 */
class ConfiguredState implements State {
  readonly alias: string;
  readonly kind: StateKind;
  private adapter: State | undefined;
  private inner: State | undefined;
  private opening: Promise<State> | undefined;
  private closed = false;

  constructor(
    private readonly settings: StateSettings,
    private readonly log: Logger,
  ) {
    this.alias = settings.alias;
    this.kind = settings.type;
  }

  async init(): Promise<void> {
    await this.ready();
  }

  /** The open adapter; opens it (again) when the last attempt failed. */
  private ready(): Promise<State> {
    if (this.inner) return Promise.resolve(this.inner);
    if (this.closed) return Promise.reject(notReady(this.alias));
    this.opening ??= this.open().finally(() => {
      this.opening = undefined;
    });
    return this.opening;
  }

  private async open(): Promise<State> {
    const s = this.settings;
    const log = this.log.child({ state: s.alias });
    if (!this.adapter) {
      const page = {
        ...(s.maxPageBytes === undefined ? {} : { maxPageBytes: s.maxPageBytes }),
        ...(s.maxValues === undefined ? {} : { maxValues: s.maxValues }),
      };
      if (s.type === 'memory') this.adapter = new MemoryState({ alias: s.alias, queries: s.queries, ...page });
      else if (s.type === 'sqlite') {
        const { SqliteState } = await import('./sqlite.js');
        this.adapter = new SqliteState({
          alias: s.alias,
          file: s.file,
          table: s.table,
          queries: s.queries,
          log,
          ...page,
        });
      } else {
        const { PostgresState } = await import('./postgres.js');
        this.adapter = new PostgresState({
          alias: s.alias,
          url: s.url,
          table: s.table,
          poolSize: s.poolSize,
          queries: s.queries,
          log,
          ...page,
        });
      }
    }
    const state = this.adapter;
    await state.init();
    if (s.seed !== undefined) {
      const n = await seedState(state, s.seed);
      if (n > 0) log.info({ records: n }, 'state seeded');
    }
    this.inner = state;
    return state;
  }

  async get(id: string): Promise<StateRecord | undefined> {
    return (this.inner ?? (await this.ready())).get(id);
  }
  async list(options?: ListOptions): Promise<ListPage> {
    return (this.inner ?? (await this.ready())).list(options);
  }
  async create(id: string, data: Record<string, unknown>, options?: WriteOptions): Promise<StateRecord> {
    return (this.inner ?? (await this.ready())).create(id, data, options);
  }
  async update(id: string, patch: Record<string, unknown>, options?: WriteOptions): Promise<StateRecord> {
    return (this.inner ?? (await this.ready())).update(id, patch, options);
  }
  async set(id: string, data: Record<string, unknown>, options?: WriteOptions): Promise<StateRecord> {
    return (this.inner ?? (await this.ready())).set(id, data, options);
  }
  async upsert(id: string, data: Record<string, unknown>, options?: WriteOptions): Promise<StateRecord> {
    return (this.inner ?? (await this.ready())).upsert(id, data, options);
  }
  async delete(id: string, options?: WriteOptions): Promise<void> {
    return (this.inner ?? (await this.ready())).delete(id, options);
  }
  /**
   * Group commit through the adapter (states/group-commit.ts). Only SQL adapters have it; a
   * memory state is never wrapped for group commit, so this is not reached for one.
   */
  async writeBatch(writes: readonly BatchWrite[]): Promise<BatchOutcome[]> {
    const inner = this.inner ?? (await this.ready());
    if (!inner.writeBatch) throw new SagawayError('INTERNAL', `state "${this.alias}" has no batched writes`);
    return inner.writeBatch(writes);
  }
  /** The adapter's list index, when it has such a thing (memory does not). */
  async ensureIndex(fields: readonly string[], sort?: string): Promise<void> {
    await (this.inner ?? (await this.ready())).ensureIndex?.(fields, sort);
  }
  async query(name: string, bindings: Record<string, unknown>): Promise<QueryResult> {
    return (this.inner ?? (await this.ready())).query(name, bindings);
  }
  async ping(): Promise<void> {
    return (this.inner ?? (await this.ready())).ping();
  }
  async close(): Promise<void> {
    this.closed = true;
    const adapter = this.adapter;
    this.inner = undefined;
    this.adapter = undefined;
    await adapter?.close();
  }
}

function notReady(alias: string): SagawayError {
  return new SagawayError('STATE_UNAVAILABLE', `state "${alias}" is not initialised`);
}
