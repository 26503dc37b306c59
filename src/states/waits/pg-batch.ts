import type { SqlRunner } from '../sql-runner.js';
import { TickBatcher } from './batcher.js';
import { COLUMNS, parkConflict, parkedOf, waitOf } from './rows.js';
import type { ParkRow, Parked, StoredResolution, WaitRow } from './store.js';

/**
 * The wait store's hot statements on PostgreSQL, each gathered over the concurrent callers of
 * one event-loop turn (batcher.ts) into one statement with a jsonb or array parameter: a park,
 * a look-up by run, a resolution, a removal. Each keeps the guard of its single
 * form (sql.ts) row by row: a resolution applies only to its wait at its version while
 * unresolved, a lease is dropped only by its owner.
 */

/** A resolution to apply (WaitStore.resolve). */
interface Resolve {
  waitId: string;
  version: number;
  resolution: StoredResolution | null;
  approvals: string[];
  now: number;
}

export class PgWaitBatches {
  private readonly parks: TickBatcher<{ row: ParkRow; owner: string | null; leaseUntil: number }, Parked>;
  private readonly runs: TickBatcher<string, WaitRow | undefined>;
  private readonly resolves: TickBatcher<Resolve, boolean>;
  private readonly removes: TickBatcher<string, void>;

  /** `w`: the quoted wait table. */
  constructor(w: string, db: () => Promise<SqlRunner>) {
    this.parks = new TickBatcher(
      async (items) => {
        const x = items.map(({ row, owner, leaseUntil }) => ({
          wait_id: row.waitId,
          journal_id: row.journalId,
          run_id: row.runId,
          runner: row.runner,
          deployment: row.deployment,
          saga_id: row.sagaId,
          step: row.step,
          visit: row.visit,
          kind: row.kind,
          signal: row.signal,
          corr_key: row.key,
          due_at: row.dueAt,
          caller: row.caller,
          created_at: row.createdAt,
          lease_owner: owner,
          lease_until: leaseUntil,
        }));
        const rows = await (
          await db()
        ).query(
          `INSERT INTO ${w} (${COLUMNS}, ready_at, lease_owner, lease_until) SELECT wait_id, journal_id, run_id, runner, ` +
            `deployment, saga_id, step, visit, kind, signal, corr_key, due_at, NULL, '[]', caller, 1, created_at, due_at, ` +
            `lease_owner, lease_until FROM jsonb_to_recordset($1::jsonb) AS x(wait_id text, journal_id text, run_id text, ` +
            `runner text, deployment text, saga_id text, step text, visit int, kind text, signal text, corr_key text, ` +
            `due_at bigint, caller text, created_at bigint, lease_owner text, lease_until bigint) ${parkConflict(w)}`,
          [JSON.stringify(x)],
        );
        const byJournal = new Map(rows.map((r) => [String(r['journal_id']), parkedOf(r)]));
        return items.map(({ row }) => {
          const parked = byJournal.get(row.journalId);
          if (parked === undefined) throw new Error('a parked wait was not answered');
          return parked;
        });
      },
      // one row per journal record: two parks of one record never share a statement
      (p) => p.row.journalId,
    );
    this.runs = new TickBatcher(async (ids) => {
      const rows = await (
        await db()
      ).query(
        `SELECT DISTINCT ON (run_id) ${COLUMNS} FROM ${w} WHERE run_id = ANY($1::text[]) ORDER BY run_id, created_at DESC`,
        [[...new Set(ids)]],
      );
      const byRun = new Map(rows.map((r) => [String(r['run_id']), waitOf(r)]));
      return ids.map((id) => byRun.get(id));
    });
    this.resolves = new TickBatcher(
      async (items) => {
        const x = items.map((r) => ({
          wait_id: r.waitId,
          v: r.version,
          resolution: r.resolution === null ? null : JSON.stringify(r.resolution),
          approvals: JSON.stringify(r.approvals),
          now: r.now,
        }));
        const rows = await (
          await db()
        ).query(
          `UPDATE ${w} AS w SET resolution = x.resolution, approvals = x.approvals, version = w.version + 1, ` +
            `ready_at = CASE WHEN x.resolution IS NOT NULL THEN x.now ELSE w.ready_at END ` +
            `FROM jsonb_to_recordset($1::jsonb) AS x(wait_id text, v int, resolution text, approvals text, now bigint) ` +
            `WHERE w.wait_id = x.wait_id AND w.version = x.v AND w.resolution IS NULL RETURNING w.wait_id`,
          [JSON.stringify(x)],
        );
        const applied = new Set(rows.map((r) => String(r['wait_id'])));
        return items.map((r) => applied.has(r.waitId));
      },
      // two decisions on one wait: one statement each, the second sees the first's version
      (r) => r.waitId,
    );
    this.removes = new TickBatcher(async (ids) => {
      await (await db()).query(`DELETE FROM ${w} WHERE wait_id = ANY($1::text[])`, [ids]);
      return ids.map(() => undefined);
    });
  }

  park(row: ParkRow, owner: string | null, leaseUntil: number): Promise<Parked> {
    return this.parks.add({ row, owner, leaseUntil });
  }
  byRun(runId: string): Promise<WaitRow | undefined> {
    return this.runs.add(runId);
  }
  resolve(r: Resolve): Promise<boolean> {
    return this.resolves.add(r);
  }
  remove(waitId: string): Promise<void> {
    return this.removes.add(waitId);
  }
}
