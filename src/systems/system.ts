import type { Cancellable } from '../core/cancel.js';
import type { ErrorInfo } from '../core/errors.js';
import type { EventStatus, Payload, RequestContext, SagaRequest, SagaResult } from '../core/types.js';
import type { RawEventMeta } from '../config/schema.js';

/**
 * The transport contract. `local.ts` delivers in process; `nats.ts` (later) goes through NATS
 * JetStream. Both carry the same two kinds of traffic: gateway -> runner saga requests, and
 * orchestrator -> executing runner events with their replies.
 */

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
  meta: RawEventMeta;
  /** the saga payload (the executing runner reads the input from it) */
  payload: Payload;
  context: RequestContext;
  /**
   * An action record's event only: the TakeAction step's parameters, which fill the record's
   * `%%param_<name>%%` slots in the executing runner's inject pass (caller data: never scanned)
   */
  params?: Record<string, unknown>;
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
}

/** Reaches runners by name to run sagas (what the gateway needs). */
export interface SagaService {
  /** run the saga serving `req.path` on runner `runner`; errors come back as a FAIL result */
  run(runner: string, req: SagaRequest): Promise<SagaResult>;
}

/** A transport. */
export interface System extends SagaService {
  readonly name: string;
  readonly type: 'local' | 'nats';
  /** deliver an event to the runner(s) consuming `event.stream` and resolve with the reply; never rejects, resolves at once when `cancel` aborts */
  dispatch(event: EventMessage, cancel: Cancellable): Promise<EventReply>;
  /** whether the transport is connected (readiness) */
  ready(): Promise<boolean>;
  close(): Promise<void>;
}
