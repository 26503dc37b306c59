import type { ParkRow, Parked, SignalRow, StoredResolution, WaitRow, WaitStats, WaitStore } from './store.js';
import { LazyConnection, type SqlRunner } from '../sql-runner.js';
import { PgWaitBatches } from './pg-batch.js';
import { COLUMNS, parkConflict, parkedOf, signalOf, waitOf } from './rows.js';

export type { SqlRunner } from '../sql-runner.js';

/**
 * The wait store in SQL, shared by SQLite and PostgreSQL (sql-open.ts gives the connection).
 * Every state change is one statement guarded by what it expects (`resolution IS NULL AND
 * version = $v`, `lease_until <= $now`, `consumed_by IS NULL`), so replicas and gateways racing
 * on one wait or one signal settle on exactly one winner.
 */

/** What differs between the two databases. */
export interface WaitDialect {
  /** a 64-bit integer (epoch milliseconds) */
  bigint: string;
  /** appended to the SELECT that picks waits to lease (PostgreSQL: `FOR UPDATE SKIP LOCKED`) */
  lockRows: string;
  /**
   * PostgreSQL: the hot statements of concurrent callers are gathered into one (pg-batch.ts),
   * and a claim reads the runs' journal records in the same statement (`journal`: the journal's
   * quoted table, whose rows are `id, version, data jsonb`: states/postgres.ts).
   */
  batched?: { journal: string };
}

/** Signals deleted by one pruning pass at most. */
const PRUNE_BATCH = 1000;

export class SqlWaitStore implements WaitStore {
  private readonly w: string;
  private readonly s: string;
  private readonly connection: LazyConnection;
  private readonly batches: PgWaitBatches | undefined;

  constructor(
    readonly kind: string,
    private readonly table: string,
    private readonly dialect: WaitDialect,
    open: () => Promise<SqlRunner>,
  ) {
    this.w = `"${table}_waits"`;
    this.s = `"${table}_signals"`;
    this.connection = new LazyConnection(open, (db) => this.createTables(db));
    this.batches = dialect.batched ? new PgWaitBatches(this.w, () => this.db()) : undefined;
  }

  /** The connection (sql-runner.ts LazyConnection: opened, tables made, on first use). */
  private db(): Promise<SqlRunner> {
    return this.connection.get();
  }

  private async createTables(db: SqlRunner): Promise<void> {
    const b = this.dialect.bigint;
    const ddl = [
      `CREATE TABLE IF NOT EXISTS ${this.w} (wait_id TEXT PRIMARY KEY, journal_id TEXT NOT NULL UNIQUE, ` +
        `run_id TEXT NOT NULL, runner TEXT NOT NULL, deployment TEXT NOT NULL, saga_id TEXT NOT NULL, ` +
        `step TEXT NOT NULL, visit INTEGER NOT NULL, kind TEXT NOT NULL, signal TEXT, corr_key TEXT, ` +
        `due_at ${b} NOT NULL, ready_at ${b} NOT NULL, resolution TEXT, approvals TEXT NOT NULL, caller TEXT, ` +
        `lease_owner TEXT, lease_until ${b} NOT NULL, version INTEGER NOT NULL, created_at ${b} NOT NULL)`,
      `CREATE INDEX IF NOT EXISTS "${this.table}_waits_ready" ON ${this.w} (runner, deployment, ready_at)`,
      `CREATE INDEX IF NOT EXISTS "${this.table}_waits_run" ON ${this.w} (run_id)`,
      `CREATE INDEX IF NOT EXISTS "${this.table}_waits_sig" ON ${this.w} (signal, corr_key, created_at)`,
      `CREATE TABLE IF NOT EXISTS ${this.s} (message_id TEXT PRIMARY KEY, signal TEXT NOT NULL, corr_key TEXT NOT NULL, ` +
        `data TEXT, keep_until ${b} NOT NULL, expires_at ${b} NOT NULL, consumed_by TEXT, created_at ${b} NOT NULL)`,
      `CREATE INDEX IF NOT EXISTS "${this.table}_signals_key" ON ${this.s} (signal, corr_key, created_at)`,
      `CREATE INDEX IF NOT EXISTS "${this.table}_signals_exp" ON ${this.s} (expires_at)`,
    ];
    // Two PostgreSQL replicas creating the tables at once: one sees a duplicate; the retry finds them.
    for (const sql of ddl) {
      await db.query(sql, []).catch((err: unknown) => {
        const code = ((err as { cause?: { code?: string } }).cause ?? {}).code;
        if (code === '23505' || code === '42P07' || code === '42710') return db.query(sql, []);
        throw err;
      });
    }
  }

  async init(): Promise<void> {
    await this.db();
  }

  async park(row: ParkRow, owner: string, leaseUntil: number): Promise<Parked> {
    // PostgreSQL: no park lease; the claim leaves the wait alone while the run's record is RUNNING
    if (this.batches) return this.batches.park(row, null, 0);
    const db = await this.db();
    const [stored] = await db.query(
      `INSERT INTO ${this.w} (${COLUMNS}, ready_at, lease_owner, lease_until) VALUES ` +
        `($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, NULL, '[]', $13, 1, $14, $12, $15, $16) ${parkConflict(this.w)}`,
      [
        row.waitId,
        row.journalId,
        row.runId,
        row.runner,
        row.deployment,
        row.sagaId,
        row.step,
        row.visit,
        row.kind,
        row.signal,
        row.key,
        row.dueAt,
        row.caller,
        row.createdAt,
        owner,
        leaseUntil,
      ],
    );
    if (stored === undefined) throw new Error('a parked wait was not answered');
    return parkedOf(stored);
  }

  async unlease(waitId: string, owner: string): Promise<void> {
    if (this.batches) return; // park took no lease (above)
    const db = await this.db();
    await db.query(`UPDATE ${this.w} SET lease_until = 0, lease_owner = NULL WHERE wait_id = $1 AND lease_owner = $2`, [
      waitId,
      owner,
    ]);
  }

  async claimReady(
    runner: string,
    deployment: string,
    now: number,
    owner: string,
    leaseUntil: number,
    limit: number,
  ): Promise<WaitRow[]> {
    const db = await this.db();
    const journal = this.dialect.batched?.journal;
    // PostgreSQL: the runs' journal records come with the claim (the resume need not read each),
    // and a wait whose run's record is RUNNING (being parked, or resumed and going on) is not
    // taken: that is what lets a park go without a lease of its own
    const pick =
      journal === undefined
        ? `SELECT wait_id FROM ${this.w} WHERE runner = $1 AND deployment = $2 AND ready_at <= $3 AND lease_until <= $3 ` +
          `ORDER BY ready_at LIMIT $6 ${this.dialect.lockRows}`
        : `SELECT w.wait_id FROM ${this.w} w LEFT JOIN ${journal} j ON j.id = w.journal_id WHERE w.runner = $1 AND ` +
          `w.deployment = $2 AND w.ready_at <= $3 AND w.lease_until <= $3 AND (j.id IS NULL OR j.data->>'status' <> 'RUNNING') ` +
          `ORDER BY w.ready_at LIMIT $6 FOR UPDATE OF w SKIP LOCKED`;
    const claim =
      `UPDATE ${this.w} SET lease_owner = $4, lease_until = $5 WHERE wait_id IN (${pick}) ` +
      `AND lease_until <= $3 RETURNING ${COLUMNS}`;
    const sql =
      journal === undefined
        ? claim
        : `WITH c AS (${claim}) SELECT c.*, j.version AS j_version, j.data AS j_data FROM c LEFT JOIN ${journal} j ON j.id = c.journal_id`;
    const rows = await db.query(sql, [runner, deployment, now, owner, leaseUntil, limit]);
    return rows.map(waitOf);
  }

  async nextReady(runner: string, deployment: string, after: number): Promise<number | undefined> {
    const db = await this.db();
    const [row] = await db.query(
      `SELECT MIN(ready_at) AS at FROM ${this.w} WHERE runner = $1 AND deployment = $2 AND ready_at > $3`,
      [runner, deployment, after],
    );
    const at = row?.['at'];
    return at === null || at === undefined ? undefined : Number(at);
  }

  async byRun(runId: string): Promise<WaitRow | undefined> {
    if (this.batches) return this.batches.byRun(runId);
    const db = await this.db();
    const [row] = await db.query(
      `SELECT ${COLUMNS} FROM ${this.w} WHERE run_id = $1 ORDER BY created_at DESC LIMIT 1`,
      [runId],
    );
    return row === undefined ? undefined : waitOf(row);
  }

  async byId(waitId: string): Promise<WaitRow | undefined> {
    const db = await this.db();
    const [row] = await db.query(`SELECT ${COLUMNS} FROM ${this.w} WHERE wait_id = $1`, [waitId]);
    return row === undefined ? undefined : waitOf(row);
  }

  async resolve(
    waitId: string,
    version: number,
    resolution: StoredResolution | null,
    approvals: string[],
    now: number,
  ): Promise<boolean> {
    if (this.batches) return this.batches.resolve({ waitId, version, resolution, approvals, now });
    const db = await this.db();
    const rows = await db.query(
      `UPDATE ${this.w} SET resolution = $3, approvals = $4, version = version + 1, ` +
        `ready_at = CASE WHEN $5 = 1 THEN $6 ELSE ready_at END ` +
        `WHERE wait_id = $1 AND version = $2 AND resolution IS NULL RETURNING wait_id`,
      [
        waitId,
        version,
        resolution === null ? null : JSON.stringify(resolution),
        JSON.stringify(approvals),
        resolution === null ? 0 : 1,
        now,
      ],
    );
    return rows.length > 0;
  }

  async waitingFor(signal: string, key: string, limit: number): Promise<WaitRow[]> {
    const db = await this.db();
    const rows = await db.query(
      `SELECT ${COLUMNS} FROM ${this.w} WHERE signal = $1 AND corr_key = $2 AND resolution IS NULL ORDER BY created_at LIMIT $3`,
      [signal, key, limit],
    );
    return rows.map(waitOf);
  }

  async remove(waitId: string): Promise<void> {
    if (this.batches) return this.batches.remove(waitId);
    const db = await this.db();
    await db.query(`DELETE FROM ${this.w} WHERE wait_id = $1`, [waitId]);
  }

  async keepSignal(row: SignalRow, expiresAt: number): Promise<SignalRow | undefined> {
    const db = await this.db();
    const inserted = await db.query(
      `INSERT INTO ${this.s} (message_id, signal, corr_key, data, keep_until, expires_at, consumed_by, created_at) ` +
        `VALUES ($1, $2, $3, $4, $5, $6, NULL, $7) ON CONFLICT (message_id) DO NOTHING RETURNING message_id`,
      [row.messageId, row.signal, row.key, JSON.stringify(row.data ?? null), row.keepUntil, expiresAt, Date.now()],
    );
    if (inserted.length > 0) return undefined;
    const [old] = await db.query(
      `SELECT message_id, signal, corr_key, data, keep_until, consumed_by FROM ${this.s} WHERE message_id = $1`,
      [row.messageId],
    );
    return old === undefined ? undefined : signalOf(old);
  }

  async takeSignal(signal: string, key: string, waitId: string, now: number): Promise<SignalRow | undefined> {
    const db = await this.db();
    const [row] = await db.query(
      `UPDATE ${this.s} SET consumed_by = $3 WHERE message_id = (SELECT message_id FROM ${this.s} ` +
        `WHERE signal = $1 AND corr_key = $2 AND consumed_by IS NULL AND keep_until > $4 ORDER BY created_at LIMIT 1 ${this.dialect.lockRows}) ` +
        `AND consumed_by IS NULL RETURNING message_id, signal, corr_key, data, keep_until, consumed_by`,
      [signal, key, waitId, now],
    );
    return row === undefined ? undefined : signalOf(row);
  }

  async claimSignal(messageId: string, waitId: string): Promise<boolean> {
    const db = await this.db();
    const rows = await db.query(
      `UPDATE ${this.s} SET consumed_by = $2 WHERE message_id = $1 AND consumed_by IS NULL RETURNING message_id`,
      [messageId, waitId],
    );
    return rows.length > 0;
  }

  async releaseSignal(messageId: string, waitId: string): Promise<void> {
    const db = await this.db();
    await db.query(`UPDATE ${this.s} SET consumed_by = NULL WHERE message_id = $1 AND consumed_by = $2`, [
      messageId,
      waitId,
    ]);
  }

  async keptCount(now: number): Promise<number> {
    const db = await this.db();
    const [row] = await db.query(`SELECT COUNT(*) AS n FROM ${this.s} WHERE consumed_by IS NULL AND keep_until > $1`, [
      now,
    ]);
    return Number(row?.['n'] ?? 0);
  }

  async stats(now: number): Promise<WaitStats> {
    const db = await this.db();
    const [w] = await db.query(
      `SELECT COUNT(*) AS parked, COALESCE(SUM(CASE WHEN ready_at <= $1 THEN 1 ELSE 0 END), 0) AS due FROM ${this.w}`,
      [now],
    );
    return { parked: Number(w?.['parked'] ?? 0), due: Number(w?.['due'] ?? 0), kept: await this.keptCount(now) };
  }

  async prune(now: number): Promise<void> {
    const db = await this.db();
    await db.query(
      `DELETE FROM ${this.s} WHERE message_id IN (SELECT message_id FROM ${this.s} WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2)`,
      [now, PRUNE_BATCH],
    );
  }

  async close(): Promise<void> {
    await this.connection.close();
  }
}
