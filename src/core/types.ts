import type { TraceCarrier } from './otel.js';
import type { Cancellable } from './cancel.js';
import type { ErrorInfo } from './errors.js';

/** The JSON document a saga works on (DESIGN §4.1). */
export type Payload = Record<string, unknown>;

/** Who is calling: from a JWT, an API key, or nobody (public APIs). */
export interface Principal {
  /** subject: the JWT `sub`, `apikey:<name>`, or `anonymous` */
  sub: string;
  roles: string[];
  claims: Record<string, unknown>;
  anonymous: boolean;
  /** how the gateway authenticated it (absent: anonymous, or a principal made by code) */
  kind?: 'jwt' | 'apikey';
}

/** The request part of the `@` context. */
export interface RequestInfo {
  method: string;
  /** the saga path requested, segments already percent-decoded, without /api/request or /api/stream and without a format extension */
  path: string;
  id: string;
  query: Record<string, unknown>;
}

/**
 * The `@` request context seen by inject paths (`@.request.method`) and JSONata variables
 * (`$request.method`): request, user, the last step error and the last event status.
 */
export interface RequestContext {
  request: RequestInfo;
  user: Principal | null;
  error?: ErrorInfo;
  status?: EventStatus;
}

/** A request for a runner to run the saga that serves `path`. */
export interface SagaRequest {
  method: string;
  path: string;
  /** INPUT of §4.1: the JSON body (POST/PUT/PATCH) or the query (GET/DELETE/HEAD); path parameters are added by the runner */
  input: Record<string, unknown>;
  query: Record<string, unknown>;
  /** the run id: made by the gateway for every request, unique (never the client's header) */
  requestId: string;
  /**
   * the id of this saga run (idempotency keys `<runId>:<stepId>`, logs): the request id for a
   * one-shot request, `<requestId>.<n>` for the n-th poll of a stream (every poll is a run of
   * its own); absent = the runner makes a fresh one
   */
  runId?: string;
  user: Principal | null;
  /** the caller's scope (core/caller.ts callerKey); default: derived from `user` */
  caller?: string;
  /** the client's own `X-Request-Id`, for logs and status lookups only */
  correlationId?: string;
  /** waits: `stream` for a poll of `/api/stream/<path>`: a saga with a wait step refuses it (WAIT_NOT_STREAMABLE) */
  form?: 'stream';
  /** the whole saga must end by then (epoch ms); default now + the saga's timeout */
  deadline?: number;
  /** the request's W3C trace context while tracing is on (core/otel.ts); over NATS a message header */
  trace?: TraceCarrier;
  /** aborted when the caller no longer wants the result (client gone, stream closed) */
  signal?: AbortSignal;
  /** the same, in process and without an AbortController until one is needed (core/cancel.ts); wins over `signal` */
  cancel?: Cancellable;
}

export type EventStatus = 'SUCCESS' | 'FAIL' | 'ACK' | 'TIMEOUT';
// waits: WAITING = parked (202); SUSPENDED = its retries ran out under `onExhausted: suspend` (202, issue 22)
export type Outcome = 'SUCCESS' | 'ACK' | 'FAIL' | 'TIMEOUT' | 'WAITING' | 'SUSPENDED';

/** What a saga run ends with; the gateway maps it to HTTP (DESIGN §5). */
export interface SagaResult {
  outcome: Outcome;
  http: number;
  response?: unknown;
  error?: ErrorInfo;
  /** id of the saga that ran, when one was found */
  sagaId?: string;
  /** id of this saga run (idempotency keys are `<runId>:<stepId>`) */
  runId?: string;
  /**
   * Whether the run happened, when this result is not simply its outcome (issue 26): `none` = no
   * runner took the request, or its failure came before anything with an effect was sent (an
   * Idempotency-Key is released: a retry runs it); `unknown` = it may have run and this is not its
   * outcome (the connection to its runner was lost, no answer came in time, the outcome was not
   * recorded): its outcome is the one at /api/status (an Idempotency-Key stays bound to the run).
   * Absent: the result is the run's outcome.
   */
  ran?: 'none' | 'unknown';
}
