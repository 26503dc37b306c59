import type { Principal } from './types.js';

/**
 * The contract between the gateway's wait routes (gateway/waits/) and the runner side that
 * decides waits (runner/waits/service.ts, issue 21): the gateway is handed one of these when it
 * is built and never reaches into the runner. Every method throws a SagawayError with a stable
 * code (WAIT_NOT_FOUND, WAIT_RESOLVED, CALLBACK_EXPIRED, FORBIDDEN, ...) when it refuses.
 */

/** How a wait ended, or was decided, as the resumed step sees it (its condition value). */
export type WaitResolution = 'SUCCESS' | 'SIGNAL' | 'TIMEOUT' | 'REJECTED' | 'CANCELLED';

/** What a signal, an approval, a callback or a cancel did to a wait. */
export interface Decided {
  runId: string;
  /** the wait's resolution, or APPROVING while approvals are missing */
  status: WaitResolution | 'APPROVING';
  approvals?: number;
  required?: number;
}

/** A correlation signal (`POST /api/signals/<name>`), checked. */
export interface KeyedSignal {
  key: string;
  data: unknown;
  messageId: string;
  /** ms the signal is kept for a wait that comes later (0: not kept) */
  ttlMs: number;
}

/** What a correlation signal did. */
export interface KeyedOutcome {
  messageId: string;
  status: 'APPLIED' | 'KEPT';
  duplicate: boolean;
  runId?: string;
}

/** Longest `ttl` of a kept signal: 7 days. */
export const MAX_SIGNAL_TTL_MS = 7 * 24 * 3600_000;
/** Longest callback token accepted (longer ones are refused unread). */
export const MAX_CALLBACK_TOKEN = 1024;

/** Signals, callbacks and cancels of parked runs. */
export interface WaitService {
  /** whether any runner of the file parks runs (else the routes answer 404 to everything) */
  readonly active: boolean;
  /** `POST /api/runs/<runId>/signals/<name>` */
  signalRun(runId: string, name: string, data: unknown, principal: Principal | null): Promise<Decided>;
  /** `POST /api/runs/<runId>/cancel` */
  cancel(runId: string, principal: Principal | null): Promise<Decided>;
  /** runs (issue 22): `POST /api/runs/<runId>/abort` of a waiting run, by an operator the gateway admitted (gateway.admin) */
  cancelByOperator?(runId: string): Promise<Decided>;
  /** `POST /api/callbacks/<token>` */
  callback(token: string, reject: boolean, data: unknown, principal: Principal | null): Promise<Decided>;
  /** what a callback token decides on (the confirmation page) */
  callbackInfo(token: string): Promise<{ runId: string; step: string; until: string; approval: boolean }>;
  /** `POST /api/signals/<name>` */
  signalByKey(name: string, signal: KeyedSignal, principal: Principal | null): Promise<KeyedOutcome>;
  /** subscribe to the end of runs resumed in this process (Prefer: wait); absent elsewhere */
  readonly onEnded?: ((listener: (runId: string) => void) => () => void) | undefined;
}
