import type { Pool, PoolClient, QueryResult, QueryResultRow } from 'pg';
import { SagawayError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { isUnavailable, toStateError } from './postgres-errors.js';
import type { PostgresSql } from './postgres-tables.js';

/**
 * The connections of a `postgres` state (postgres.ts): a `pg` pool, loaded lazily, and the two
 * ways a statement runs on it (alone, or in a transaction). Outages: the pool has an `error`
 * listener (an idle connection killed by a server restart would otherwise crash the process), a
 * checked-out client gets one too, and any failure to reach the server becomes
 * STATE_UNAVAILABLE (503, retryable). The pool opens new connections on demand, so the same
 * instance works again once the server is back.
 */

/** How the pool connects (PostgresStateOptions). */
export interface PoolOptions {
  url: string;
  /** default 10 */
  poolSize?: number | undefined;
  log?: Logger | undefined;
  /** how long to wait for a connection; default 5 s */
  connectTimeoutMs?: number | undefined;
  /** server-side limit of one statement (`statement_timeout`); default 30 s */
  statementTimeoutMs?: number | undefined;
}

/** The pool of one state. */
export class PostgresPool implements PostgresSql {
  private pool: Pool | undefined;

  constructor(
    private readonly alias: string,
    private readonly options: PoolOptions,
  ) {}

  /** Make the pool, once; opening again after a failure (server down at start) reuses it. */
  async open(): Promise<void> {
    if (this.pool) return;
    const pg = (await import('pg')).default;
    const pool = new pg.Pool({
      connectionString: this.options.url,
      max: this.options.poolSize ?? 10,
      connectionTimeoutMillis: this.options.connectTimeoutMs ?? 5000,
      idleTimeoutMillis: 30_000,
      // nothing a request waits for should run longer; a stuck statement frees its connection
      statement_timeout: this.options.statementTimeoutMs ?? 30_000,
    });
    pool.on('error', (err) => {
      // an idle connection died (server restart, network): the pool drops it and opens a new one later
      this.options.log?.warn({ state: this.alias, code: (err as { code?: string }).code }, 'postgres connection lost');
    });
    this.pool = pool;
  }

  /** End the pool; statements after this fail with STATE_UNAVAILABLE until it is opened again. */
  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    await pool?.end();
  }

  /** One statement on any pooled connection; connection failures become STATE_UNAVAILABLE. */
  async run<R extends QueryResultRow = QueryResultRow>(sql: string, params?: unknown[]): Promise<QueryResult<R>> {
    const pool = this.openPool();
    try {
      return await pool.query<R>(sql, params);
    } catch (err) {
      throw this.wrap(err);
    }
  }

  /** BEGIN ... COMMIT on one connection; rolled back when `fn` throws. */
  async transaction<T>(fn: (client: PoolClient) => Promise<T>): Promise<T> {
    const pool = this.openPool();
    let client: PoolClient;
    try {
      client = await pool.connect();
    } catch (err) {
      throw this.wrap(err);
    }
    // while checked out the pool's own error listener is detached: without this one, a server
    // restart in the middle of a transaction would be an unhandled 'error' event
    let broken: unknown;
    const onError = (err: unknown): void => {
      broken = err;
    };
    client.on('error', onError);
    try {
      await client.query('BEGIN');
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      if (broken === undefined && !isUnavailable(err)) {
        await client.query('ROLLBACK').catch((e: unknown) => {
          broken = e;
        });
      } else broken ??= err;
      throw err instanceof SagawayError ? err : this.wrap(err);
    } finally {
      client.off('error', onError);
      // a broken connection is destroyed instead of going back to the pool
      client.release(broken === undefined ? undefined : (broken as Error));
    }
  }

  private wrap(err: unknown): SagawayError {
    return toStateError(this.alias, err);
  }

  private openPool(): Pool {
    if (!this.pool) throw new SagawayError('STATE_UNAVAILABLE', `state "${this.alias}" is not open`);
    return this.pool;
  }
}
