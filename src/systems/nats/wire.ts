import { SagawayError, toErrorInfo, type ErrorInfo } from '../../core/errors.js';
import type { Names } from './names.js';
import { isObject } from '../../core/path.js';
import type { SagaRequest, SagaResult } from '../../core/types.js';
import type { EventMessage, EventReply } from '../../core/messages.js';

/**
 * What crosses NATS, as JSON. Every message carries `v` (format version) so that a future
 * format can be told apart; a message that is not JSON, has another `v` or lacks its fields is
 * dropped by the receiver (and logged), never trusted.
 */

/** Format version of every message. */
export const WIRE_VERSION = 1;

/** Where the executing runner sends its reply. */
export interface ReplyRoute {
  /** the nats system (by name) that carries the reply */
  system: string;
  subject: string;
  /** true: publish through JetStream (a `responseStream`); false: core NATS */
  durable: boolean;
}

/** An event on the wire: the event plus its reply route and target (its trace context: in headers). */
export interface EventWire extends Omit<EventMessage, 'trace'> {
  trace?: EventMessage['trace'];
  v: number;
  reply: ReplyRoute;
  runner: string;
  deployment: string;
}

/** A reply on the wire. */
export interface ReplyWire {
  v: number;
  eventId: string;
  runner: string;
  reply: EventReply;
}

/** A saga request on the wire (the signal and the cancellation stay behind). */
export type RunWire = Omit<SagaRequest, 'signal' | 'cancel'> & { v: number };

/** The wire form of a request: its data fields only, by name (a getter or an in-process handle never travels). */
export function runWire(req: SagaRequest, deadline: number): RunWire {
  const wire: RunWire = {
    v: WIRE_VERSION,
    method: req.method,
    path: req.path,
    input: req.input,
    query: req.query,
    requestId: req.requestId,
    user: req.user,
    deadline,
  };
  if (req.caller !== undefined) wire.caller = req.caller;
  if (req.runId !== undefined) wire.runId = req.runId;
  if (req.correlationId !== undefined) wire.correlationId = req.correlationId;
  if (req.form !== undefined) wire.form = req.form;
  return wire;
}

/** Encode; PAYLOAD_TOO_LARGE (413) when the message would exceed the server's max payload. */
export function encode(message: object, maxBytes: number, what: string): Uint8Array {
  const bytes = Buffer.from(JSON.stringify(message), 'utf8');
  if (bytes.length > maxBytes) {
    throw new SagawayError('PAYLOAD_TOO_LARGE', `the ${what} is ${bytes.length} bytes; NATS accepts ${maxBytes}`, {
      http: 413,
    });
  }
  return bytes;
}

/** Decode a message of the current version, or undefined when it is not one. */
export function decode(data: Uint8Array): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'));
    return isObject(value) && value['v'] === WIRE_VERSION ? value : undefined;
  } catch {
    return undefined;
  }
}

const str = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 1024;

/** Whether a decoded message is an event. */
export function isEventWire(m: Record<string, unknown>): m is Record<string, unknown> & EventWire {
  return (
    str(m['id']) &&
    str(m['runId']) &&
    str(m['stepId']) &&
    str(m['idempotencyKey']) &&
    str(m['stream']) &&
    str(m['runner']) &&
    str(m['deployment']) &&
    typeof m['deadline'] === 'number' &&
    isObject(m['meta']) &&
    isObject(m['payload']) &&
    isObject(m['context']) &&
    (m['params'] === undefined || isObject(m['params'])) &&
    isObject(m['reply']) &&
    str(m['reply']['system']) &&
    str(m['reply']['subject'])
  );
}

/** Whether a decoded message is a reply. */
export function isReplyWire(m: Record<string, unknown>): m is Record<string, unknown> & ReplyWire {
  if (!str(m['eventId']) || !isObject(m['reply'])) return false;
  const status = m['reply']['status'];
  return status === 'SUCCESS' || status === 'FAIL' || status === 'ACK' || status === 'TIMEOUT';
}

/** Whether a decoded message is a saga request. */
export function isRunWire(m: Record<string, unknown>): m is Record<string, unknown> & RunWire {
  return (
    str(m['method']) &&
    typeof m['path'] === 'string' &&
    isObject(m['input']) &&
    isObject(m['query']) &&
    str(m['requestId']) &&
    (m['user'] === null || isObject(m['user']))
  );
}

/** A failed result for a coded error. */
export function failResult(error: ErrorInfo): SagaResult {
  return { outcome: 'FAIL', http: error.http ?? 500, error };
}

/**
 * The wire form of an event for one (runner, deployment). Field by field, not `...event`: the
 * spread copied every field through a generic path and was a tenth of dispatch's own CPU in
 * issue 13's profile.
 */
export function eventWire(event: EventMessage, reply: ReplyRoute, runner: string, deployment: string): EventWire {
  return {
    id: event.id,
    runId: event.runId,
    stepId: event.stepId,
    idempotencyKey: event.idempotencyKey,
    stream: event.stream,
    meta: event.meta,
    payload: event.payload,
    context: event.context,
    params: event.params,
    // the sending run's lineage (core/lineage.ts): an onFail run's descendants start no
    // onFail in the executing process either, and the request's run count goes along
    lineage: event.lineage,
    deadline: event.deadline,
    // tracing: the context itself travels in headers (trace-headers.ts); the try number here
    attempt: event.attempt,
    v: WIRE_VERSION,
    reply,
    runner,
    deployment,
  };
}

/**
 * Where the executing runner sends an event's reply: to this process on the event's
 * `responseSystem` (default: the sending system), on core NATS, or in its `responseStream`
 * (JetStream) when the step names one.
 */
export function replyRouteFor(
  meta: EventMessage['meta'],
  self: { name: string; names: Names },
  peer: (name: string) => { names: Names } | undefined,
  instance: string,
): { route: ReplyRoute } | { error: ErrorInfo } {
  const systemName = meta.responseSystem ?? self.name;
  const system = systemName === self.name ? self : peer(systemName);
  if (!system) {
    return {
      error: toErrorInfo(
        new SagawayError('RUNNER_UNAVAILABLE', `responseSystem "${systemName}" is not a connected nats system`),
      ),
    };
  }
  const stream = meta.responseStream;
  return {
    route:
      stream === undefined
        ? { system: systemName, subject: system.names.reply(instance), durable: false }
        : { system: systemName, subject: system.names.response(stream, instance), durable: true },
  };
}
