import type { ErrorInfo } from './errors.js';
import type { Lineage } from './lineage.js';
import type { TraceCarrier } from './otel.js';
import type { RunAttempt } from './runs.js';
import type { EventStatus, Payload, RequestContext, SagaRequest, SagaResult } from './types.js';

/**
 * The message contract: what crosses layers (gateway -> runner -> saga engine -> executor) and
 * processes (over NATS, as JSON). Every transport carries exactly these shapes; the wire adds a
 * version field and nothing else (systems/nats/wire.ts).
 *
 *   SagaRequest / SagaResult   gateway -> runner: run the saga serving a path (core/types.ts)
 *   EventMessage / EventReply  orchestrating runner -> executing runner: one event step
 *   SagaService                what the gateway needs to reach runners
 *   StatusSource / AnyRunStatus  what the gateway needs to answer GET /api/status (and list runs)
 */

export type { EventStatus, Outcome, RequestContext, RequestInfo, SagaRequest, SagaResult } from './types.js';

/**
 * An event step's own settings as they travel to the executing runner, which applies its
 * layers and inject to them (DESIGN §6.6). The same fields as the saga format's `eventMeta`
 * (saga/schema.ts checks at compile time that the two cannot drift apart).
 */
export interface EventMetaSpec {
  handler?: string;
  action: string;
  version: number;
  domain?: string;
  inputElement?: string;
  outputElement?: string;
  parameters?: Record<string, unknown>;
  stream?: string;
  system?: string;
  deployments?: string[];
  inject?: boolean;
  followAck?: boolean;
  responseSystem?: string;
  responseStream?: string;
  timeout?: number | string;
}

/** An event step's message to a handler (DESIGN §6.3). */
export interface EventMessage {
  /** unique per dispatch; replies carry it back */
  id: string;
  /** saga run and step; the idempotency key is `<runId>:<stepId>` */
  runId: string;
  stepId: string;
  idempotencyKey: string;
  /** the stream the event travels on (`local` = the orchestrating runner itself) */
  stream: string;
  /** the step's own settings; the executing runner applies its overrides and inject */
  meta: EventMetaSpec;
  /** the saga payload (the executing runner reads the input from it) */
  payload: Payload;
  context: RequestContext;
  /**
   * An action record's event only: the TakeAction step's parameters, which fill the record's
   * `%%param_<name>%%` slots in the executing runner's inject pass (caller data: never scanned)
   */
  params?: Record<string, unknown>;
  /**
   * where the sending run comes from (core/lineage.ts): whether it descends from an onFail run,
   * and the request's run budget; absent = the event starts a fresh lineage
   */
  lineage?: Lineage;
  /** reply needed by then (epoch ms) */
  deadline: number;
  /** the step's W3C trace context while the run is traced (core/otel.ts); over NATS message headers */
  trace?: TraceCarrier;
  /** which try of a retried step this is (from 2; absent: the first), for the action's span */
  attempt?: number;
}

/** The executing runner's answer. The orchestrator writes `output` into the payload. */
export interface EventReply {
  status: EventStatus;
  output?: unknown;
  error?: ErrorInfo;
  /** effective input and output elements after overrides and inject (null = not set) */
  inputElement: string | null;
  outputElement: string | null;
  /** deployment id of the runner that executed it */
  deployment?: string;
  /**
   * false when the event reached no handler: no runner consumes its stream, or it could not be
   * sent or stored (the broker away). A run whose every event came back so has done nothing
   * (issue 26: its failure is not stored against an Idempotency-Key). Absent: it may have run.
   */
  sent?: false;
}

/** Reaches runners by name to run sagas (what the gateway needs). */
export interface SagaService {
  /** run the saga serving `req.path` on runner `runner`; errors come back as a FAIL result */
  run(runner: string, req: SagaRequest): Promise<SagaResult>;
}

/** What `GET /api/status/<requestId>` shows for a journaled run (runner/orchestrator/journal.ts). */
export interface RunStatus {
  /** the run id (the X-Request-Id response header of the request) */
  requestId: string;
  /** the client's own X-Request-Id, when it sent one */
  correlationId?: string;
  /** WAITING: parked on a wait step (issue 21); SUSPENDED: its retries ran out (`onExhausted: suspend`, issue 22) */
  status: 'RUNNING' | 'DONE' | 'WAITING' | 'SUSPENDED';
  /** what a parked run waits for */
  waitingOn?: unknown;
  /** runs: redrives so far, and the attempts before this one (docs/runs.md) */
  redriveCount?: number;
  attempts?: RunAttempt[];
  outcome?: SagaResult['outcome'];
  http?: number;
  response?: unknown;
  error?: ErrorInfo;
  startedAt: string;
  updatedAt: string;
}

/** What `GET /api/status/<id>` shows for a run of an outcome bucket (the journal's RunStatus, plus LOST and responseOmitted). */
export interface OutcomeStatus {
  requestId: string;
  correlationId?: string;
  /** LOST: the process that ran it stopped before it ended, and without a journal nobody resumes it */
  status: 'RUNNING' | 'DONE' | 'LOST';
  outcome?: SagaResult['outcome'];
  http?: number;
  response?: unknown;
  responseOmitted?: number;
  error?: ErrorInfo;
  startedAt: string;
  updatedAt: string;
}

/** What `GET /api/status/<id>` shows: a journal's record, or an outcome bucket's (issue 13). */
export type AnyRunStatus = RunStatus | OutcomeStatus;

/** A journaled run as the console lists it: who ran what, and how it ended (no payload, no response). */
export interface JournaledRun {
  requestId: string;
  runner: string;
  sagaId: string;
  method?: string;
  path?: string;
  status: 'RUNNING' | 'DONE' | 'WAITING';
  /** waits: what a WAITING run waits for (step, kind, until, signal, key), as /api/status shows it */
  waitingOn?: unknown;
  outcome?: SagaResult['outcome'];
  http?: number;
  errorCode?: string;
  startedAt: number;
  updatedAt: number;
}

/** How a status lookup may find a run. */
export interface LookupOptions {
  /**
   * Also by the caller's own correlation id (its `X-Request-Id`), not only by the run id the
   * gateway made. Default false: anonymous callers share a scope per address (a NAT), and a
   * correlation id the client chose can be guessed by its neighbours; a run id cannot.
   */
  byCorrelation?: boolean;
}

/** Where run statuses are read (journals, outcome buckets): what the gateway needs for /api/status and the console. */
export interface StatusSource {
  /** `scope`: the caller's (core/caller.ts callerKey); `id`: a run id, or with `byCorrelation` also a correlation id */
  lookup(scope: string, id: string, options?: LookupOptions): Promise<AnyRunStatus | undefined>;
  /** the latest runs, newest first (the console); absent = none listed */
  recent?(limit: number): Promise<JournaledRun[]>;
}
