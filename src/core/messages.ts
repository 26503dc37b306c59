import type { ErrorInfo } from './errors.js';
import type { Lineage } from './lineage.js';
import type { EventStatus, Payload, RequestContext, SagaRequest, SagaResult } from './types.js';

/**
 * The message contract: what crosses layers (gateway -> runner -> saga engine -> executor) and
 * processes (over NATS, as JSON). Every transport carries exactly these shapes; the wire adds a
 * version field and nothing else (systems/nats/wire.ts).
 *
 *   SagaRequest / SagaResult   gateway -> runner: run the saga serving a path (core/types.ts)
 *   EventMessage / EventReply  orchestrating runner -> executing runner: one event step
 *   SagaService                what the gateway needs to reach runners
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
