import type { OutcomeStatus } from '../systems/nats/outcome-value.js';
import type { JournaledRun, RunStatus } from './orchestrator/journal.js';

/** What `GET /api/status/<id>` shows: a journal's record, or an outcome bucket's (issue 13). */
export type AnyRunStatus = RunStatus | OutcomeStatus;

/** Where run statuses are read: journals, outcome buckets. */
export interface StatusLookup {
  /** `scope`: the caller's (core/caller.ts callerKey); `id`: a run id or the caller's correlation id */
  lookup(scope: string, id: string): Promise<AnyRunStatus | undefined>;
  /** the latest runs, newest first (the console); absent = none listed */
  recent?(limit: number): Promise<JournaledRun[]>;
}

/**
 * The first source that knows the run, in order: the journals first (a journaled runner writes
 * no bucket, and a journal can resume a run), then the outcome buckets. A source that fails
 * fails the lookup (503), rather than answering 404 for a run it may hold.
 */
export function firstStatus(sources: readonly (StatusLookup | undefined)[]): StatusLookup {
  const list = sources.filter((s): s is StatusLookup => s !== undefined);
  // Only journals list their runs (an outcome bucket is read by key alone).
  const listing = list.find((s) => s.recent !== undefined);
  return {
    ...(listing?.recent ? { recent: (limit: number) => listing.recent!(limit) } : {}),
    async lookup(scope, id) {
      for (const source of list) {
        const found = await source.lookup(scope, id);
        if (found) return found;
      }
      return undefined;
    },
  };
}
