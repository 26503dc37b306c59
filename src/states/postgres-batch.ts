import { SagawayError } from '../core/errors.js';
import type { BatchOutcome, BatchWrite } from './state.js';
import { checkExpected, checkId, dataJson, mergePatch, stale } from './write-plan.js';

/**
 * A batch of writes (State.writeBatch) as ONE PostgreSQL statement: the writes travel as one
 * jsonb array, creates and upserts are INSERTs, updates and sets one UPDATE ... FROM, each with
 * its version check in the WHERE clause, so that a write that does not apply simply touches no
 * row (no error, no savepoint) and the others commit. One statement in autocommit is one
 * transaction: one round trip and one commit for the whole batch.
 *
 * The checks are those of write-plan.ts, in SQL: create → RECORD_EXISTS when the id is taken;
 * update/set → RECORD_NOT_FOUND or STALE_VERSION; upsert without a version inserts or replaces;
 * upsert with one behaves as set, and a missing record is STALE_VERSION. `update` merges the patch
 * at the top level (jsonb `||`, as mergePatch does). Under concurrency the version check is
 * re-evaluated on the newest row (READ COMMITTED's update recheck), so compare-and-set holds.
 */

/** The row the statement answers per write: `was` is the version before it (null: no record). */
interface BatchRow {
  i: number;
  version: number | null;
  data: Record<string, unknown> | null;
  was: number | null;
}

/** The statement for table `t` (quoted); `$1` is the jsonb array of writes. */
export function batchSql(t: string): string {
  return (
    `WITH x AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(i int, o text, id text, d jsonb, ev int, w boolean)),` +
    ` c AS (INSERT INTO ${t} (id, version, data) SELECT id, 1, d FROM x WHERE o = 'create'` +
    ` ON CONFLICT (id) DO NOTHING RETURNING id, version),` +
    ` u AS (INSERT INTO ${t} AS r (id, version, data) SELECT id, 1, d FROM x WHERE o = 'upsert' AND ev IS NULL` +
    ` ON CONFLICT (id) DO UPDATE SET version = r.version + 1, data = EXCLUDED.data, updated_at = now() RETURNING id, version),` +
    ` m AS (UPDATE ${t} AS r SET version = r.version + 1,` +
    ` data = CASE WHEN x.o = 'update' THEN r.data || x.d ELSE x.d END, updated_at = now()` +
    ` FROM x WHERE r.id = x.id AND (x.o IN ('update', 'set') OR (x.o = 'upsert' AND x.ev IS NOT NULL))` +
    ` AND (x.ev IS NULL OR r.version = x.ev) RETURNING r.id, r.version, CASE WHEN x.w THEN r.data END AS data)` +
    ` SELECT x.i, COALESCE(c.version, u.version, m.version) AS version, m.data, p.version AS was FROM x` +
    ` LEFT JOIN c ON c.id = x.id LEFT JOIN u ON u.id = x.id LEFT JOIN m ON m.id = x.id LEFT JOIN ${t} p ON p.id = x.id`
  );
}

/**
 * Run a batch with `query` (one statement). Writes that fail validation fail alone and are not
 * sent. Rejects only when the statement failed (nothing of the batch applied).
 */
export async function postgresBatch(
  t: string,
  writes: readonly BatchWrite[],
  query: (sql: string, params: unknown[]) => Promise<{ rows: BatchRow[] }>,
): Promise<BatchOutcome[]> {
  const out: (BatchOutcome | undefined)[] = new Array<BatchOutcome | undefined>(writes.length);
  const items: string[] = [];
  writes.forEach((w, i) => {
    try {
      checkId(w.id);
      checkExpected(w.expectedVersion);
      // the patch goes through mergePatch's key filter, as a single update would
      const json = dataJson(w.op === 'update' ? mergePatch({}, w.data) : w.data);
      items.push(
        `{"i":${i},"o":"${w.op}","id":${JSON.stringify(w.id)},"d":${json},` +
          `"ev":${w.expectedVersion ?? 'null'},"w":${w.wantData === true}}`,
      );
    } catch (err) {
      out[i] = { ok: false, error: err as Error };
    }
  });
  if (items.length > 0) {
    const r = await query(batchSql(t), [`[${items.join(',')}]`]);
    for (const row of r.rows) out[row.i] = outcomeOf(writes[row.i] as BatchWrite, row);
  }
  return out.map((o) => o ?? { ok: false, error: new SagawayError('STATE_UNAVAILABLE', 'write not answered') });
}

function outcomeOf(w: BatchWrite, row: BatchRow): BatchOutcome {
  if (row.version !== null) return { ok: true, record: { id: w.id, version: row.version, data: row.data ?? w.data } };
  if (w.op === 'create') return { ok: false, error: new SagawayError('RECORD_EXISTS', 'record already exists') };
  if (row.was === null && w.op !== 'upsert') {
    return { ok: false, error: new SagawayError('RECORD_NOT_FOUND', 'record not found') };
  }
  return { ok: false, error: stale(w.expectedVersion ?? 0, row.was ?? 0) };
}
