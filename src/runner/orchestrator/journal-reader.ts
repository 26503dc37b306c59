import type { JournaledRun, LookupOptions, RunStatus } from '../../core/messages.js';
import { isObject } from '../../core/path.js';
import { RUN_STATES, type RunAttempt, type RunState } from '../../core/runs.js';
import type { SagaResult } from '../../core/types.js';
import type { State } from '../../states/state.js';
import { correlatedRun } from './correlation-index.js';
import { journalId } from './journal-record.js';

/**
 * The gateway's side of the saga journal: a run's status for `GET /api/status/<requestId>` and
 * the console's list of recent runs, read from the records the runners write (journal.ts).
 * Nothing here writes.
 */

/** Reads run statuses from the journals of a configuration (gateway side). */
export class JournalReader {
  constructor(private readonly states: readonly State[]) {}

  /**
   * The status of the run `id` (a run id, else a correlation id: the first run that carried it)
   * as run for the caller `scope`, or undefined when there is none for this caller.
   */
  async lookup(scope: string, id: string, options: LookupOptions = {}): Promise<RunStatus | undefined> {
    const runKey = journalId(scope, id);
    for (const state of this.states) {
      const rec = await state.get(runKey);
      if (rec) return statusOf(rec.data);
    }
    // by the caller's own correlation id only when asked (core/messages.ts LookupOptions)
    if (options.byCorrelation !== true) return undefined;
    for (const state of this.states) {
      const requestId = await correlatedRun(state, scope, id);
      if (requestId === undefined) continue;
      const rec = await state.get(journalId(scope, requestId));
      if (rec) return statusOf(rec.data);
    }
    return undefined;
  }

  /** The latest `limit` runs of these journals, newest first (the console's list). */
  recent(limit: number): Promise<JournaledRun[]> {
    return recentRuns(this.states, limit);
  }
}

/** The latest `limit` runs of the journals, newest first (the console). */
export async function recentRuns(states: readonly State[], limit: number): Promise<JournaledRun[]> {
  const pages = await Promise.all(
    states.map((s) => s.list({ sort: '-updatedAt', limit: limit * 2 }).then((p) => p.list)),
  );
  return pages
    .flat()
    .map((rec) => rec.data)
    .filter((d) => d['status'] === 'DONE' || d['status'] === 'RUNNING' || d['status'] === 'WAITING') // waits:
    .map((d): JournaledRun => {
      const result = isObject(d['result']) ? (d['result'] as unknown as SagaResult) : undefined;
      const request = isObject(d['context']) && isObject(d['context']['request']) ? d['context']['request'] : {};
      return {
        requestId: String(d['requestId']),
        runner: String(d['runner']),
        sagaId: String(d['sagaId']),
        ...(typeof request['method'] === 'string' ? { method: request['method'] } : {}),
        ...(typeof request['path'] === 'string' ? { path: request['path'] } : {}),
        status: d['status'] === 'DONE' ? 'DONE' : d['status'] === 'WAITING' ? 'WAITING' : 'RUNNING', // waits:
        ...(d['status'] === 'WAITING' && isObject(d['waitingOn']) ? { waitingOn: d['waitingOn'] } : {}), // waits:
        ...(result ? { outcome: result.outcome, http: result.http } : {}),
        ...(result?.error ? { errorCode: result.error.code } : {}),
        startedAt: Number(d['startedAt']) || 0,
        updatedAt: Number(d['updatedAt']) || 0,
      };
    })
    .sort((a, b) => b.updatedAt - a.updatedAt)
    .slice(0, limit);
}

/** A journal record as the status endpoint shows it (no payload, no input: only the outcome). */
function statusOf(data: Record<string, unknown>): RunStatus {
  const result = isObject(data['result']) ? (data['result'] as unknown as SagaResult) : undefined;
  const status = RUN_STATES.includes(data['status'] as never) ? (data['status'] as RunState) : 'RUNNING'; // waits:
  const iso = (v: unknown) => new Date(typeof v === 'number' ? v : 0).toISOString();
  return {
    requestId: String(data['requestId']),
    ...(typeof data['correlationId'] === 'string' ? { correlationId: data['correlationId'] } : {}),
    status,
    ...(status === 'WAITING' && isObject(data['waitingOn']) ? { waitingOn: data['waitingOn'] } : {}), // waits:
    ...(typeof data['redriveCount'] === 'number' && data['redriveCount'] > 0
      ? { redriveCount: data['redriveCount'] }
      : {}),
    ...(Array.isArray(data['attempts']) ? { attempts: data['attempts'] as RunAttempt[] } : {}),
    ...(result
      ? {
          outcome: result.outcome,
          http: result.http,
          ...(result.response !== undefined ? { response: result.response } : {}),
          ...(result.error ? { error: result.error } : {}),
        }
      : {}),
    startedAt: iso(data['startedAt']),
    updatedAt: iso(data['updatedAt']),
  };
}
