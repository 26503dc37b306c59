import type { ErrorInfo } from './errors.js';
import type { Outcome } from './types.js';

/**
 * The contract between the gateway's run routes (gateway/runs/, issue 22: `GET /api/runs`,
 * `POST /api/runs/<runId>/redrive`, `/abort`) and the journal side that answers them
 * (runner/orchestrator/run-admin.ts): the gateway is handed one of these when it is built and
 * never reaches into the runner. Every method throws a SagawayError with a stable code
 * (RUN_NOT_FOUND, RUN_NOT_REDRIVABLE, ALREADY_REDRIVEN, HISTORY_EXPIRED, ...) when it refuses.
 */

/** Where a journaled run stands (SUSPENDED: its retries ran out under `onExhausted: suspend`). */
export type RunState = 'RUNNING' | 'WAITING' | 'SUSPENDED' | 'DONE';
export const RUN_STATES: readonly RunState[] = ['RUNNING', 'WAITING', 'SUSPENDED', 'DONE'];

/** `GET /api/runs` query, checked. */
export interface RunQuery {
  saga?: string;
  status?: RunState;
  /** epoch ms: runs started at or after */
  since?: number;
  /** epoch ms: runs started before */
  until?: number;
  cursor?: string;
  limit: number;
}

/** One attempt of a run that was redriven: how it ended, and how the next one began. */
export interface RunAttempt {
  /** 0 = the first run, 1 = the first redrive, ... */
  attempt: number;
  startedAt: number;
  endedAt: number;
  /** how the attempt ended (SUSPENDED: parked) */
  outcome: Outcome | 'SUSPENDED';
  errorCode?: string;
  /** the step that failed */
  step?: string;
}

/** A journaled run as the run list shows it: who ran what, and how it ended (no payload, no response). */
export interface RunSummary {
  runId: string;
  requestId: string;
  runner: string;
  sagaId: string;
  method?: string;
  path?: string;
  status: RunState;
  waitingOn?: unknown;
  outcome?: Outcome;
  http?: number;
  errorCode?: string;
  /** the step that failed (or that a SUSPENDED run is parked on) */
  failedStep?: string;
  /** redrives so far (absent: none) */
  redriveCount?: number;
  /** the attempts before this one, oldest first (absent: never redriven) */
  attempts?: RunAttempt[];
  /** epoch ms */
  startedAt: number;
  updatedAt: number;
}

/** One page of runs, newest first; `next` while more follow. */
export interface RunPage {
  runs: RunSummary[];
  next?: string;
}

/** `POST /api/runs/<runId>/redrive`, checked. */
export interface RedriveRequest {
  /** `failed` (the step the run stopped at) or a step id */
  fromStep: string;
  /** replaces the saga's input (`parameters` of the payload) for the steps that run again */
  input?: Record<string, unknown>;
  dryRun: boolean;
  /** why (kept in the run's history) */
  reason: string;
  /** who (the caller key: `key:<name>`, `jwt:<subject>`; or `loopback`) */
  by: string;
}

/** A step that a redrive runs again. */
export interface RedriveStep {
  id: string;
  type: string;
  /** event steps: handler.action@version */
  action?: string;
  /** event steps: whether the action declared itself idempotent (docs/runs.md) */
  idempotent?: boolean;
}

/** What a redrive did, or (dryRun) would do. */
export interface RedriveOutcome {
  runId: string;
  dryRun: boolean;
  /** the step the run goes on from */
  fromStep: string;
  /** the steps that may run again, in graph order from fromStep */
  steps: RedriveStep[];
  /** event steps among them whose action is not declared idempotent (they may repeat an effect) */
  notIdempotent: string[];
  redriveCount: number;
  status: RunState;
}

/** What an abort did. */
export interface AbortOutcome {
  runId: string;
  /** compensations that will run (the run then ends FAIL with RUN_ABORTED) */
  compensations: number;
  status: RunState;
}

/** Finding and operating journaled runs (the gateway's run routes and the console). */
export interface RunAdmin {
  list(query: RunQuery): Promise<RunPage>;
  redrive(runId: string, request: RedriveRequest): Promise<RedriveOutcome>;
  abort(runId: string, reason: string, by: string): Promise<AbortOutcome>;
}

/** The error of a run that was aborted (`POST /api/runs/<runId>/abort`). */
export function abortedError(reason: string): ErrorInfo {
  return { code: 'RUN_ABORTED', message: `aborted by an operator: ${reason}`.slice(0, 512), http: 409 };
}
