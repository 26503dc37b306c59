import { SagawayError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { StateSettings } from '../config/settings.js';
import { MemoryState } from './memory.js';
import { seedState } from './seed.js';
import type { ListOptions, ListPage, QueryResult, State, StateKind, StateRecord, WriteOptions } from './state.js';

/**
 * Make the state a configuration describes. The SQLite and PostgreSQL adapters (and their
 * drivers) are imported inside init(), so a process whose states are all `memory` never loads
 * better-sqlite3 or pg.
 */

export type { State, StateRecord, ListOptions, ListPage, WriteOptions, QueryResult } from './state.js';

/** A state for `settings`; call init() before use (it opens the store and loads the seed). */
export function createState(settings: StateSettings, log: Logger): State {
  return new ConfiguredState(settings, log);
}

/** Delegates to the adapter once init() has made it; seeds an empty state. */
class ConfiguredState implements State {
  readonly alias: string;
  readonly kind: StateKind;
  private inner: State | undefined;
  private initializing: Promise<void> | undefined;

  constructor(
    private readonly settings: StateSettings,
    private readonly log: Logger,
  ) {
    this.alias = settings.alias;
    this.kind = settings.type;
  }

  init(): Promise<void> {
    this.initializing ??= this.open().catch((err: unknown) => {
      this.initializing = undefined;
      throw err;
    });
    return this.initializing;
  }

  private async open(): Promise<void> {
    const s = this.settings;
    const log = this.log.child({ state: s.alias });
    let state: State;
    if (s.type === 'memory') state = new MemoryState({ alias: s.alias, queries: s.queries });
    else if (s.type === 'sqlite') {
      const { SqliteState } = await import('./sqlite.js');
      state = new SqliteState({ alias: s.alias, file: s.file, table: s.table, queries: s.queries, log });
    } else {
      const { PostgresState } = await import('./postgres.js');
      state = new PostgresState({
        alias: s.alias,
        url: s.url,
        table: s.table,
        poolSize: s.poolSize,
        queries: s.queries,
        log,
      });
    }
    await state.init();
    if (s.seed !== undefined) {
      const n = await seedState(state, s.seed);
      if (n > 0) log.info({ records: n }, 'state seeded');
    }
    this.inner = state;
  }

  private get s(): State {
    if (!this.inner) throw notReady(this.alias);
    return this.inner;
  }

  async get(id: string): Promise<StateRecord | undefined> {
    return this.s.get(id);
  }
  async list(options?: ListOptions): Promise<ListPage> {
    return this.s.list(options);
  }
  async create(id: string, data: Record<string, unknown>, options?: WriteOptions): Promise<StateRecord> {
    return this.s.create(id, data, options);
  }
  async update(id: string, patch: Record<string, unknown>, options?: WriteOptions): Promise<StateRecord> {
    return this.s.update(id, patch, options);
  }
  async set(id: string, data: Record<string, unknown>, options?: WriteOptions): Promise<StateRecord> {
    return this.s.set(id, data, options);
  }
  async upsert(id: string, data: Record<string, unknown>, options?: WriteOptions): Promise<StateRecord> {
    return this.s.upsert(id, data, options);
  }
  async delete(id: string, options?: WriteOptions): Promise<void> {
    return this.s.delete(id, options);
  }
  async query(name: string, bindings: Record<string, unknown>): Promise<QueryResult> {
    return this.s.query(name, bindings);
  }
  async ping(): Promise<void> {
    return this.s.ping();
  }
  async close(): Promise<void> {
    const inner = this.inner;
    this.inner = undefined;
    this.initializing = undefined;
    await inner?.close();
  }
}

function notReady(alias: string): SagawayError {
  return new SagawayError('STATE_UNAVAILABLE', `state "${alias}" is not initialised`);
}
