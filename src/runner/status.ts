import type { OutcomeStatus } from '../systems/nats/outcome-value.js';
import type { JournaledRun, RunStatus } from './orchestrator/journal-reader.js';

/** What `GET /api/status/<id>` shows: a journal's record, or an outcome bucket's (issue 13). */
export type AnyRunStatus = RunStatus | OutcomeStatus;

/** How a lookup may find a run. */
export interface LookupOptions {
  /**
   * Also by the caller's own correlation id (its `X-Request-Id`), not only by the run id the
   * gateway made. Default false: anonymous callers share a scope per address (a NAT), and a
   * correlation id the client chose can be guessed by its neighbours; a run id cannot.
   */
  byCorrelation?: boolean;
}

/** Where run statuses are read: journals, outcome buckets. */
export interface StatusLookup {
  /** `scope`: the caller's (core/caller.ts callerKey); `id`: a run id, or with `byCorrelation` also a correlation id */
  lookup(scope: string, id: string, options?: LookupOptions): Promise<AnyRunStatus | undefined>;
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
    async lookup(scope, id, options) {
      for (const source of list) {
        const found = await source.lookup(scope, id, options);
        if (found) return found;
      }
      return undefined;
    },
  };
}
