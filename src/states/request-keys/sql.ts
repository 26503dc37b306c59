import { randomUUID } from 'node:crypto';
import { SagawayError } from '../../core/errors.js';
import type { Claim, KeyBinding, KeyQuota, RequestKeyStore, StoredResponse } from './store.js';
import { LazyConnection, type SqlRunner } from '../sql-runner.js';

export type { SqlRunner } from '../sql-runner.js';

/**
 * The request key store in a SQL table, shared by the SQLite and PostgreSQL adapters (which
 * give it a connection and their column types). One statement takes a key: an INSERT that,
 * on conflict, overwrites the row only when it has expired, and returns the row only when it
 * wrote it. It is atomic in both databases, so replicas sharing the table never both take a
 * key. Times are the gateways' clocks (epoch ms), not the database's, so that a lock and a
 * retention mean the same on every replica as long as their clocks agree to a second or so.
 *
 * The per-caller quota is counted in that same INSERT (live rows of the scope, through an index
 * on (scope, expires_at)), so a full scope inserts nothing. Requests of one caller that race
 * (on one replica or several) may each see the count below the bound: the bound can be passed
 * by the claims that run at the same instant, never by more.
 */

/** Column types that differ between the two databases. */
export interface SqlDialect {
  bytes: string;
  /** a 64-bit integer (epoch milliseconds) */
  bigint: string;
  /**
   * add the column `name` of SQL type `type` to a table made before it existed (a no-op when it
   * is there); `run` runs a statement
   */
  addColumn(
    run: (sql: string) => Promise<Record<string, unknown>[]>,
    table: string,
    name: string,
    type: string,
  ): Promise<void>;
}

interface Row {
  fingerprint: string;
  owner: unknown;
  run_id: unknown;
  lock_until: unknown;
  done: unknown;
  status: unknown;
  headers: unknown;
  body: unknown;
  omitted: unknown;
  expires_at: unknown;
}

/** Expired rows deleted by one pruning pass at most. */
const PRUNE_BATCH = 1000;
/** Claims between two pruning passes: fewer than a batch, so that pruning keeps up. */
const PRUNE_EVERY = 200;

/** Request keys in the table `table` (a checked, unquoted identifier). */
export class SqlKeyStore implements RequestKeyStore {
  private readonly t: string;
  private claims = 0;
  private readonly connection: LazyConnection;

  constructor(
    readonly kind: string,
    private readonly table: string,
    private readonly dialect: SqlDialect,
    open: () => Promise<SqlRunner>,
    /** told about a pruning pass that failed (it is retried later) */
    private readonly onPruneError: (err: unknown) => void,
  ) {
    this.t = `"${table}"`;
    this.connection = new LazyConnection(open, (db) => this.createTable(db));
  }

  /** The connection (sql-runner.ts LazyConnection: opened, tables made, on first use). */
  private db(): Promise<SqlRunner> {
    return this.connection.get();
  }

  async init(): Promise<void> {
    await this.db();
    await this.prune(Date.now());
  }

  private async createTable(db: SqlRunner): Promise<void> {
    const { bytes, bigint } = this.dialect;
    const ddl = [
      `CREATE TABLE IF NOT EXISTS ${this.t} (id TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, owner TEXT NOT NULL, ` +
        `done INTEGER NOT NULL DEFAULT 0, status INTEGER, headers TEXT, body ${bytes}, ` +
        `omitted INTEGER NOT NULL DEFAULT 0, expires_at ${bigint} NOT NULL, scope TEXT, run_id TEXT, lock_until ${bigint})`,
      `CREATE INDEX IF NOT EXISTS "${this.table}_exp" ON ${this.t} (expires_at)`,
    ];
    // Two PostgreSQL replicas creating the table (or adding its column) at once: one of them
    // sees a duplicate, and the second try finds it there.
    const run = (sql: string) =>
      db.query(sql, []).catch((err: unknown) => {
        const code = ((err as { cause?: { code?: string } }).cause ?? {}).code;
        if (code === '23505' || code === '42P07' || code === '42710' || code === '42701') return db.query(sql, []);
        throw err;
      });
    for (const sql of ddl) await run(sql);
    // a table made by an older version has no scope column (its rows then count for no caller),
    // nor the binding of a claim to its run (its unfinished rows are free when their lock passed)
    await this.dialect.addColumn(run, this.table, 'scope', 'TEXT');
    await this.dialect.addColumn(run, this.table, 'run_id', 'TEXT');
    await this.dialect.addColumn(run, this.table, 'lock_until', bigint);
    await run(`CREATE INDEX IF NOT EXISTS "${this.table}_scope" ON ${this.t} (scope, expires_at)`);
  }

  async claim(
    id: string,
    fingerprint: string,
    now: number,
    lockUntil: number,
    quota?: KeyQuota,
    bind?: KeyBinding,
  ): Promise<Claim> {
    if (++this.claims >= PRUNE_EVERY) {
      this.claims = 0;
      // in the background: a claim never waits for it, and a failure only delays it
      void this.prune(now).catch(this.onPruneError);
    }
    const db = await this.db();
    const owner = randomUUID();
    // A row that vanishes between the two statements (pruned, released) is claimed on the next turn.
    for (let attempt = 0; attempt < 3; attempt++) {
      // INSERT ... SELECT so that a full scope selects no row; CAST types the parameters for PostgreSQL
      const { bigint } = this.dialect;
      const taken = await db.query(
        `INSERT INTO ${this.t} (id, fingerprint, owner, done, status, headers, body, omitted, expires_at, scope, run_id, lock_until) ` +
          `SELECT $1, $2, $3, 0, NULL, NULL, NULL, 0, CAST($4 AS ${bigint}), $6, $8, CAST($9 AS ${bigint}) WHERE ` +
          `(SELECT COUNT(*) FROM (SELECT 1 FROM ${this.t} WHERE scope = $6 AND expires_at > $5 LIMIT $7) AS live) < $7 ` +
          `ON CONFLICT (id) DO UPDATE SET fingerprint = excluded.fingerprint, owner = excluded.owner, done = 0, ` +
          `status = NULL, headers = NULL, body = NULL, omitted = 0, expires_at = excluded.expires_at, ` +
          `scope = excluded.scope, run_id = excluded.run_id, lock_until = excluded.lock_until ` +
          `WHERE ${this.t}.expires_at <= $5 RETURNING owner`,
        // no quota: a NULL scope matches no row, so the count is 0 < 1
        [
          id,
          fingerprint,
          owner,
          bind ? Math.max(bind.expiresAt, lockUntil) : lockUntil,
          now,
          quota?.scope ?? null,
          quota?.max ?? 1,
          bind?.runId ?? null,
          bind ? lockUntil : null,
        ],
      );
      if (taken.length > 0) return { kind: 'claimed', owner };
      const [row] = (await db.query(
        `SELECT fingerprint, owner, done, status, headers, body, omitted, expires_at, run_id, lock_until FROM ${this.t} WHERE id = $1`,
        [id],
      )) as unknown as Row[];
      if (row === undefined || Number(row.expires_at) <= now) {
        if (quota !== undefined && (await this.full(db, quota, now))) return { kind: 'exhausted' };
        continue;
      }
      if (row.fingerprint !== fingerprint) return { kind: 'mismatch' };
      if (Number(row.done) !== 1) {
        if (typeof row.run_id !== 'string') return { kind: 'running' };
        return { kind: 'running', runId: row.run_id, owner: String(row.owner), lockUntil: Number(row.lock_until) };
      }
      return { kind: 'done', response: responseOf(row) };
    }
    throw new SagawayError('INTERNAL', 'request key: the claim did not settle');
  }

  async complete(id: string, owner: string, response: StoredResponse, expiresAt: number): Promise<boolean> {
    const db = await this.db();
    const rows = await db.query(
      `UPDATE ${this.t} SET done = 1, status = $3, headers = $4, body = $5, omitted = $6, expires_at = $7 ` +
        `WHERE id = $1 AND owner = $2 RETURNING id`,
      [
        id,
        owner,
        response.status,
        JSON.stringify(response.headers),
        response.body,
        response.omitted ? 1 : 0,
        expiresAt,
      ],
    );
    return rows.length > 0;
  }

  async takeOver(id: string, owner: string, lockUntil: number, bind: KeyBinding): Promise<string | undefined> {
    const db = await this.db();
    const next = randomUUID();
    const rows = await db.query(
      `UPDATE ${this.t} SET owner = $3, run_id = $4, lock_until = $5, expires_at = $6 ` +
        `WHERE id = $1 AND owner = $2 AND done = 0 RETURNING owner`,
      [id, owner, next, bind.runId, lockUntil, Math.max(bind.expiresAt, lockUntil)],
    );
    return rows.length > 0 ? next : undefined;
  }

  async release(id: string, owner: string): Promise<void> {
    const db = await this.db();
    await db.query(`DELETE FROM ${this.t} WHERE id = $1 AND owner = $2`, [id, owner]);
  }

  async close(): Promise<void> {
    await this.connection.close();
  }

  /** Whether `quota.scope` holds `quota.max` live rows. */
  private async full(db: SqlRunner, quota: KeyQuota, now: number): Promise<boolean> {
    const [row] = await db.query(
      `SELECT COUNT(*) AS n FROM (SELECT 1 FROM ${this.t} WHERE scope = $1 AND expires_at > $2 LIMIT $3) AS live`,
      [quota.scope, now, quota.max],
    );
    return Number(row?.n) >= quota.max;
  }

  /** Delete up to one batch of expired rows, oldest first. */
  private async prune(now: number): Promise<void> {
    const db = await this.db();
    await db.query(
      `DELETE FROM ${this.t} WHERE id IN (SELECT id FROM ${this.t} WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2)`,
      [now, PRUNE_BATCH],
    );
  }
}

function responseOf(row: Row): StoredResponse {
  const headers = typeof row.headers === 'string' ? (JSON.parse(row.headers) as Record<string, string>) : {};
  const body = row.body instanceof Uint8Array ? Buffer.from(row.body) : Buffer.alloc(0);
  return { status: Number(row.status), headers, body, omitted: Number(row.omitted) === 1 };
}
