import type { Parked, SignalRow, StoredResolution, WaitRow } from './store.js';

/** The wait table's columns a WaitRow is read from, in the order the park statements write them. */
export const COLUMNS =
  'wait_id, journal_id, run_id, runner, deployment, saga_id, step, visit, kind, signal, corr_key, due_at, resolution, approvals, caller, version, created_at';

/**
 * What parking over an existing row of the same journal record does (the single and the
 * batched park share it). A run parked again at the same journal record (a resumed run that
 * waits anew, or the same wait parked twice after a crash) replaces its row; a resolution
 * already there is kept when it is the same wait (same step and visit), so a signal that came
 * in between is not lost. `w` is the quoted wait table.
 */
export function parkConflict(w: string): string {
  const same = `${w}.step = excluded.step AND ${w}.visit = excluded.visit`;
  return (
    `ON CONFLICT (journal_id) DO UPDATE SET wait_id = CASE WHEN ${same} THEN ${w}.wait_id ELSE excluded.wait_id END, ` +
    `resolution = CASE WHEN ${same} THEN ${w}.resolution ELSE NULL END, ` +
    `approvals = CASE WHEN ${same} THEN ${w}.approvals ELSE '[]' END, ` +
    `ready_at = CASE WHEN ${same} AND ${w}.resolution IS NOT NULL THEN ${w}.ready_at ELSE excluded.ready_at END, ` +
    `run_id = excluded.run_id, runner = excluded.runner, deployment = excluded.deployment, saga_id = excluded.saga_id, ` +
    `step = excluded.step, visit = excluded.visit, kind = excluded.kind, signal = excluded.signal, corr_key = excluded.corr_key, ` +
    `due_at = excluded.due_at, caller = excluded.caller, lease_owner = excluded.lease_owner, ` +
    `lease_until = excluded.lease_until, version = ${w}.version + 1 ` +
    `RETURNING wait_id, journal_id, version, resolution`
  );
}

export function parkedOf(r: Record<string, unknown>): Parked {
  return {
    waitId: String(r['wait_id']),
    version: Number(r['version']),
    resolution: typeof r['resolution'] === 'string' ? (JSON.parse(r['resolution']) as StoredResolution) : null,
  };
}

export function waitOf(r: Record<string, unknown>): WaitRow {
  return {
    waitId: String(r['wait_id']),
    journalId: String(r['journal_id']),
    runId: String(r['run_id']),
    runner: String(r['runner']),
    deployment: String(r['deployment']),
    sagaId: String(r['saga_id']),
    step: String(r['step']),
    visit: Number(r['visit']),
    kind: r['kind'] === 'timer' ? 'timer' : 'signal',
    signal: typeof r['signal'] === 'string' ? r['signal'] : null,
    key: typeof r['corr_key'] === 'string' ? r['corr_key'] : null,
    dueAt: Number(r['due_at']),
    resolution: typeof r['resolution'] === 'string' ? (JSON.parse(r['resolution']) as StoredResolution) : null,
    approvals: typeof r['approvals'] === 'string' ? (JSON.parse(r['approvals']) as string[]) : [],
    caller: typeof r['caller'] === 'string' ? r['caller'] : null,
    version: Number(r['version']),
    createdAt: Number(r['created_at']),
    // the claim's join (PostgreSQL): the run's journal record as it was read, null when gone
    ...('j_version' in r
      ? {
          journal:
            r['j_version'] === null
              ? null
              : { version: Number(r['j_version']), data: r['j_data'] as Record<string, unknown> },
        }
      : {}),
  };
}

export function signalOf(r: Record<string, unknown>): SignalRow {
  return {
    messageId: String(r['message_id']),
    signal: String(r['signal']),
    key: String(r['corr_key']),
    data: typeof r['data'] === 'string' ? JSON.parse(r['data']) : null,
    keepUntil: Number(r['keep_until']),
    consumedBy: typeof r['consumed_by'] === 'string' ? r['consumed_by'] : null,
  };
}
