import { randomUUID } from 'node:crypto';
import { Cancel, type Cancellable } from '../core/cancel.js';
import type { Lineage } from '../core/lineage.js';
import type { EventMessage, EventReply } from '../core/messages.js';
import type { StepSpan } from '../core/otel.js';
import { round, type TryRecord } from '../core/trace.js';
import type { EventStatus, Payload, RequestContext } from '../core/types.js';
import type { EngineDeps } from './deps.js';
import type { CompiledEventMeta, RetryPlan } from './graph.js';
import { backoffDelay, isRetried, realClock, replyCode } from './retry.js';

/** One event to send: the step's settings and what the message carries. */
export interface Send {
  saga: string;
  runId: string;
  /** the step id the message names (`<step>:undo` for a compensation) */
  stepId: string;
  /** the step id for logs and metrics */
  step: string;
  idempotencyKey: string;
  meta: CompiledEventMeta;
  payload: Payload;
  context: RequestContext;
  /** the run's lineage, carried by the message (core/lineage.ts) */
  lineage?: Lineage | undefined;
  /** no try starts, and no reply is awaited, after this (epoch ms) */
  deadline: number;
  /** told about each try of a retried event (a traced run: the console shows every attempt) */
  onTry?: ((attempt: TryRecord) => void) | undefined;
  /** the step's span while tracing is on (core/otel.ts): its context travels with the event */
  span?: StepSpan | undefined;
}

/**
 * Send an event, and again while its `retry` says so (issue 12): every try of one visit has the
 * same idempotency key (a try whose effect happened but whose reply was lost is not applied
 * twice), the delays grow as retry.ts computes, no try starts when its delay would pass the
 * deadline, and `cancel` (the saga's end, or the caller gone) stops the waiting at once.
 * Each failed try is logged; every try is counted by the observer.
 */
export function sendWithRetry(
  deps: EngineDeps,
  send: Send,
  retry: RetryPlan | undefined,
  cancel: Cancellable,
): EventReply | Promise<EventReply> {
  // One try and nobody counting: no extra promise on the common path.
  if (!retry && !send.onTry) {
    const tried = deps.observer?.tried;
    const sent = sendEvent(deps, send, cancel, 1);
    if (!tried) return sent;
    // counted (metrics): at once for a reply that is there, else one reaction (not the retry loop's async function)
    if (!(sent instanceof Promise)) {
      if (!cancel.aborted) tried(send.saga, send.step, sent.status, 1);
      return sent;
    }
    return sent.then((reply) => {
      if (!cancel.aborted) tried(send.saga, send.step, reply.status, 1);
      return reply;
    });
  }
  return tries(deps, send, retry, cancel);
}

async function tries(
  deps: EngineDeps,
  send: Send,
  retry: RetryPlan | undefined,
  cancel: Cancellable,
): Promise<EventReply> {
  const clock = deps.clock ?? realClock;
  const attempts = retry?.attempts ?? 1;
  for (let attempt = 1; ; attempt++) {
    const began = send.onTry ? performance.now() : 0;
    const reply = await sendEvent(deps, send, cancel, attempt);
    if (cancel.aborted) return reply;
    deps.observer?.tried?.(send.saga, send.step, reply.status, attempt);
    if (send.span && retry) send.span.tried(attempt, reply.status, replyCodeOf(reply));
    if (send.onTry) send.onTry(tryRecord(attempt, reply, began));
    if (!retry || attempt >= attempts || !isRetried(retry, reply)) return reply;
    const delay = backoffDelay(retry, attempt, clock.random);
    const log = { saga: send.saga, runId: send.runId, step: send.step, attempt, status: reply.status };
    if (clock.now() + delay >= send.deadline) {
      deps.log.info({ ...log, code: replyCode(reply), delay }, 'step try failed; no retry: the deadline comes first');
      return reply;
    }
    deps.log.info({ ...log, code: replyCode(reply), delay }, 'step try failed; retrying');
    await clock.sleep(delay, cancel);
    if (cancel.aborted) return reply;
  }
}

/** A failed try's code (undefined for a success). */
function replyCodeOf(reply: EventReply): string | undefined {
  return reply.status === 'SUCCESS' || reply.status === 'ACK' ? undefined : replyCode(reply);
}

/** A try as a traced run shows it. */
function tryRecord(attempt: number, reply: EventReply, began: number): TryRecord {
  const ok = reply.status === 'SUCCESS' || reply.status === 'ACK';
  return {
    attempt,
    status: reply.status,
    ms: round(performance.now() - began),
    ...(ok ? {} : { code: replyCode(reply) }),
  };
}

const EVENT_TIMED_OUT = Symbol('event timeout');

/** One try: the message, and a step timeout shorter than the deadline when the step has one. */
function sendEvent(
  deps: EngineDeps,
  send: Send,
  cancel: Cancellable,
  attempt: number,
): EventReply | Promise<EventReply> {
  const { timeoutMs } = send.meta;
  const now = (deps.clock ?? realClock).now();
  const deadline = timeoutMs === undefined ? send.deadline : Math.min(send.deadline, now + timeoutMs);
  const event: EventMessage = {
    id: randomUUID(),
    runId: send.runId,
    stepId: send.stepId,
    idempotencyKey: send.idempotencyKey,
    stream: send.meta.stream,
    meta: send.meta.raw,
    payload: send.payload,
    context: send.context,
    deadline,
  };
  if (send.lineage) event.lineage = send.lineage;
  if (send.span?.carrier) {
    event.trace = send.span.carrier;
    if (attempt > 1) event.attempt = attempt;
  }
  if (timeoutMs === undefined) return deps.dispatch(event, cancel);
  return sendTimed(deps, event, cancel, timeoutMs, deadline - now);
}

/** A step timeout shorter than the saga's: cancel just this event and report TIMEOUT. */
async function sendTimed(
  deps: EngineDeps,
  event: EventMessage,
  cancel: Cancellable,
  timeoutMs: number,
  waitMs: number,
): Promise<EventReply> {
  const eventCancel = new Cancel();
  const unlink = cancel.onAbort(() => eventCancel.abort(cancel.reason));
  const timer = setTimeout(() => eventCancel.abort(EVENT_TIMED_OUT), Math.max(0, waitMs));
  try {
    const reply = await deps.dispatch(event, eventCancel);
    if (eventCancel.reason !== EVENT_TIMED_OUT || cancel.aborted) return reply;
    return {
      status: 'TIMEOUT' as EventStatus,
      error: { code: 'EVENT_TIMEOUT', message: `no reply within ${timeoutMs} ms`, http: 504 },
      inputElement: null,
      outputElement: null,
    };
  } finally {
    clearTimeout(timer);
    unlink();
  }
}
