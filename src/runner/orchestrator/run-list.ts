import { SagawayError } from '../../core/errors.js';
import { isObject } from '../../core/path.js';
import { RUN_STATES, type RunAttempt, type RunPage, type RunQuery, type RunSummary } from '../../core/runs.js';
import type { SagaResult } from '../../core/types.js';
import { cursorAt } from '../../states/cursor.js';
import type { State, StateRecord } from '../../states/state.js';

/**
 * The list of journaled runs (`GET /api/runs`, the console's run list): newest first, by start
 * time, across every journal of the configuration. Each journal is read through an index on
 * (status, startedAt, id), so that a page is a range scan of it: one list per journal and status
 * asked for (the correlation index records in the same table have a status of their own, so
 * they are never read), merged, and the next page starts after the last run shown. The cursor is
 * that run's (startedAt, record id), opaque to clients; a run is found by its id through an
 * index on runId.
 */

/** The list index: equality on status, ordered by start time then id. */
export const LIST_INDEX = { fields: ['status'], sort: 'startedAt' } as const;
/** The lookup index of a run by its id. */
export const RUN_ID_INDEX = ['runId'] as const;
const SORT = '-startedAt';
/** Longest cursor accepted. */
export const MAX_RUN_CURSOR = 512;

/** The indexes the run list and lookups read, created once per journal (retried after a failure). */
export class RunIndexes {
  private readonly made = new Map<State, Promise<void>>();

  ensure(state: State): Promise<void> {
    let p = this.made.get(state);
    if (p === undefined) {
      p = Promise.all([
        state.ensureIndex?.(LIST_INDEX.fields, LIST_INDEX.sort),
        state.ensureIndex?.(RUN_ID_INDEX),
      ]).then(
        () => undefined,
        (err: unknown) => {
          this.made.delete(state);
          throw err;
        },
      );
      this.made.set(state, p);
    }
    return p;
  }
}

/** One page of runs of these journals. */
export async function listRuns(states: readonly State[], indexes: RunIndexes, q: RunQuery): Promise<RunPage> {
  const at = q.cursor !== undefined ? decodeRunCursor(q.cursor) : undefined;
  // the first page starts at `until` (exclusive): after (until, '') in descending order
  const start = at ?? (q.until !== undefined ? { t: q.until, id: '' } : undefined);
  const statuses = q.status ? [q.status] : RUN_STATES;
  const lists = await Promise.all(
    states.flatMap((state) =>
      statuses.map(async (status) => {
        await indexes.ensure(state);
        const page = await state.list({
          filter: { status, ...(q.saga !== undefined ? { sagaId: q.saga } : {}) },
          sort: SORT,
          limit: q.limit,
          ...(start ? { after: cursorAt(state.kind, SORT, start.t, start.id) } : {}),
        });
        const recs = page.list.filter((r) => startOf(r) >= (q.since ?? -Infinity));
        // past `since` nothing older is wanted: this list is done
        return { recs, more: page.next !== undefined && recs.length === page.list.length };
      }),
    ),
  );
  let merged = lists.flatMap((l) => l.recs).sort(newestFirst);
  // A list with more to come may have stopped before its `limit` (the store's page budget:
  // `maxPageSize`, `maxValues`): what it did not return is older than its last run, so nothing
  // older than the newest such last run is shown yet (the cursor would skip the runs between).
  const frontier = lists
    .flatMap((l) => (l.more && l.recs.length > 0 ? [l.recs[l.recs.length - 1]!] : []))
    .sort(newestFirst)[0];
  if (frontier) merged = merged.slice(0, merged.indexOf(frontier) + 1);
  const shown = merged.slice(0, q.limit);
  const more = merged.length > q.limit || lists.some((l) => l.more);
  const last = shown[shown.length - 1];
  return {
    runs: shown.map((r) => summaryOf(r.data)),
    ...(more && last ? { next: encodeRunCursor(startOf(last), last.id) } : {}),
  };
}

/** Find a run by its id in these journals (the first found: run ids never repeat). */
export async function findRun(
  states: readonly State[],
  indexes: RunIndexes,
  runId: string,
): Promise<{ state: State; rec: StateRecord } | undefined> {
  for (const state of states) {
    await indexes.ensure(state);
    const page = await state.list({ filter: { runId }, limit: 10 });
    const rec = page.list.find((r) => RUN_STATES.includes(r.data['status'] as never));
    if (rec) return { state, rec };
  }
  return undefined;
}

function startOf(r: StateRecord): number {
  const t = r.data['startedAt'];
  return typeof t === 'number' ? t : 0;
}

/** The order of each list: start time, then record id, both descending. */
function newestFirst(a: StateRecord, b: StateRecord): number {
  return startOf(b) - startOf(a) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
}

function encodeRunCursor(t: number, id: string): string {
  return Buffer.from(JSON.stringify([t, id]), 'utf8').toString('base64url');
}

function decodeRunCursor(token: string): { t: number; id: string } {
  const invalid = () => new SagawayError('INVALID_CURSOR', 'the paging cursor is not valid for this list');
  if (token.length > MAX_RUN_CURSOR || !/^[A-Za-z0-9_-]+$/.test(token)) throw invalid();
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(v) || v.length !== 2) throw invalid();
  const [t, id] = v as unknown[];
  if (typeof t !== 'number' || !Number.isSafeInteger(t) || typeof id !== 'string' || !/^run-[0-9a-f]{1,64}$/.test(id))
    throw invalid();
  return { t, id };
}

/** A journal record as the run list shows it. */
export function summaryOf(d: Record<string, unknown>): RunSummary {
  const result = isObject(d['result']) ? (d['result'] as unknown as SagaResult) : undefined;
  const request = isObject(d['context']) && isObject(d['context']['request']) ? d['context']['request'] : {};
  const status = RUN_STATES.includes(d['status'] as never) ? (d['status'] as RunSummary['status']) : 'RUNNING';
  const lastError = isObject(d['lastError']) ? d['lastError'] : undefined;
  const failedStep =
    result?.error?.step ?? (status === 'SUSPENDED' && typeof d['next'] === 'string' ? d['next'] : undefined);
  const redrives = typeof d['redriveCount'] === 'number' ? d['redriveCount'] : 0;
  return {
    runId: String(d['runId']),
    requestId: String(d['requestId']),
    runner: String(d['runner']),
    sagaId: String(d['sagaId']),
    ...(typeof request['method'] === 'string' ? { method: request['method'] } : {}),
    ...(typeof request['path'] === 'string' ? { path: request['path'] } : {}),
    status,
    ...(status === 'WAITING' && isObject(d['waitingOn']) ? { waitingOn: d['waitingOn'] } : {}),
    ...(result ? { outcome: result.outcome, http: result.http } : {}),
    ...(result?.error
      ? { errorCode: result.error.code }
      : status === 'SUSPENDED' && typeof lastError?.['code'] === 'string'
        ? { errorCode: lastError['code'] }
        : {}),
    ...(failedStep !== undefined ? { failedStep } : {}),
    ...(redrives > 0 ? { redriveCount: redrives } : {}),
    ...(Array.isArray(d['attempts']) ? { attempts: d['attempts'] as RunAttempt[] } : {}),
    startedAt: Number(d['startedAt']) || 0,
    updatedAt: Number(d['updatedAt']) || 0,
  };
}
