/**
 * OpenTelemetry tracing (issue 22 item 4, docs/tracing.md): the contract every layer sees, and
 * the process's one tracer slot. The SDK itself (core/otel-sdk.ts, `@opentelemetry/*`) is
 * imported only when `observability.tracing` or the `OTEL_*` variables switch tracing on, so a
 * process without tracing loads none of it and pays one `undefined` check per request, run and
 * step (BENCHMARKS.md). Like OpenTelemetry's own global provider, the slot is per process: the
 * CLI fills it once at start (`installTracing`), before the gateway and runners are built.
 *
 * What a span holds is bounded and never secret: ids, names, methods, routes, status codes and
 * error codes. Never a payload, a query string, a header value or an error message (those can
 * carry tokens and personal data; the logs mask them, spans simply leave them out).
 */

/** W3C trace context as it travels: the `traceparent` header, and `tracestate` when there is one. */
export interface TraceCarrier {
  traceparent: string;
  tracestate?: string;
}

/** Why a run span starts: a request's run, or a run picked up again later (a new trace linked to the first). */
export type RunStartKind = 'request' | 'resume' | 'wait' | 'redrive' | 'nested';

/** A span in progress. */
export interface OtelSpan {
  /** its context, to hand on (headers, the journal); empty when it is not sampled */
  readonly carrier: TraceCarrier | undefined;
  /** end it: `outcome` (SUCCESS, FAIL, ...), and the error code of a failure */
  end(outcome: string, errorCode?: string): void;
}

/** The HTTP server span of one gateway request. */
export interface RequestSpan {
  readonly carrier: TraceCarrier | undefined;
  /** end it with the response's status and the route that served it (a template, never the URL) */
  end(status: number, route: string | undefined): void;
}

/** A saga run's span: its steps are its children. */
export interface RunSpan extends OtelSpan {
  /** a step starts (`kind`: event, transform, ...) */
  step(id: string, kind: string): StepSpan;
}

/** A step's span; an event step's tries are recorded on it. */
export interface StepSpan extends OtelSpan {
  /** one try of a retried event ended */
  tried(attempt: number, status: string, errorCode?: string): void;
}

/** What a request span starts from (the raw request's fields; nothing else is read). */
export interface RequestStart {
  method: string;
  /** the path without its query */
  path: string;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** http or https */
  scheme: string;
  httpVersion: string;
  requestId: string;
}

/** What a run span starts from. */
export interface RunStart {
  saga: string;
  runId: string;
  runner: string;
  kind: RunStartKind;
  /** the request's span (a fresh run): the run is its child */
  parent?: TraceCarrier | undefined;
  /** the first trace of a run picked up again: the new trace links to it */
  link?: TraceCarrier | undefined;
}

/** What an executed event's span starts from (the runner that executes it). */
export interface ActionStart {
  parent: TraceCarrier;
  runId: string;
  step: string;
  stream: string;
  handler: string | undefined;
  action: string;
  version: number;
  attempt: number;
  runner: string;
}

/** The process's tracer. */
export interface Tracing {
  request(start: RequestStart): RequestSpan;
  run(start: RunStart): RunSpan;
  action(start: ActionStart): OtelSpan;
  /** export what is buffered and stop */
  shutdown(): Promise<void>;
}

/** The tracer of this process; `undefined` while tracing is off (the common, free case). */
export const tracing: { current: Tracing | undefined } = { current: undefined };

/** Install (or, with undefined, remove) the process's tracer. */
export function installTracing(tracer: Tracing | undefined): void {
  tracing.current = tracer;
}

/** Bytes of a `tracestate` carried on (W3C: 32 members of at most 256 bytes; 512 is what a sane one needs). */
export const MAX_TRACESTATE = 512;

const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;
/** W3C tracestate: printable ASCII only (no CR/LF to smuggle into a header written on). */
const TRACESTATE = /^[\x20-\x7e]+$/;

/**
 * A carrier read from a header, a NATS message or the journal: well-formed W3C `traceparent`
 * (version 00's length, lower-case hex; all-zero ids are refused by the SDK's propagator) and a
 * bounded `tracestate`; anything else is dropped, never trusted.
 */
export function carrierOf(traceparent: unknown, tracestate?: unknown): TraceCarrier | undefined {
  if (typeof traceparent !== 'string' || !TRACEPARENT.test(traceparent) || traceparent.startsWith('ff'))
    return undefined;
  return typeof tracestate === 'string' && tracestate.length <= MAX_TRACESTATE && TRACESTATE.test(tracestate)
    ? { traceparent, tracestate }
    : { traceparent };
}
