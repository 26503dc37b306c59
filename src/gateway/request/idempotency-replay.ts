import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AnyRunStatus } from '../../core/messages.js';
import type { SagaResult } from '../../core/types.js';
import type { StoredResponse } from '../../states/request-keys/index.js';
import { problemFor, sendProblem } from '../http/helpers/problem.js';

/**
 * The answers of a keyed request that does not run (request/idempotency-key.ts): a stored
 * response sent again, a first run's outcome read from its status, or 409 while it runs; and
 * what of a response is stored for them.
 */

/** Response headers a replay repeats (`location`: a parked run's 202 names where its outcome will be). */
const STORED_HEADERS = ['content-type', 'content-security-policy', 'location'] as const;

/** The response as it is stored: its status, the headers a replay repeats, and its body unless over `maxBody`. */
export function toStored(reply: FastifyReply, payload: unknown, maxBody: number): StoredResponse {
  const headers: Record<string, string> = {};
  for (const name of STORED_HEADERS) {
    const value = reply.getHeader(name);
    if (typeof value === 'string') headers[name] = value;
  }
  const text = typeof payload === 'string';
  const body = text ? Buffer.from(payload) : Buffer.isBuffer(payload) ? payload : Buffer.alloc(0);
  // A payload that is neither text nor bytes (a stream) cannot be kept either; nor can a body
  // that was never there (a replay read from a run kept without its body: stored as omitted too).
  const omitted =
    body.length > maxBody ||
    (!text && !Buffer.isBuffer(payload) && payload != null) ||
    reply.getHeader('idempotent-body-omitted') === 'true';
  return { status: reply.statusCode, headers, body: omitted ? Buffer.alloc(0) : body, omitted };
}

/** 409 IDEMPOTENCY_KEY_IN_USE: the first request still runs, or its run cannot be told yet. */
export function inUse(request: FastifyRequest, reply: FastifyReply): void {
  sendProblem(
    reply,
    problemFor('IDEMPOTENCY_KEY_IN_USE', request.id, 'a request with this Idempotency-Key is still running'),
    { 'retry-after': '1' },
  );
}

/**
 * The outcome of a run as its status shows it, when it has one: DONE with its result, WAITING
 * (parked: the 202 its request was answered with), or LOST
 * (an outcome bucket's run whose runner died without a journal: it will never have one, and is
 * answered as its caller was, 504).
 */
export function outcomeOf(run: AnyRunStatus): SagaResult | undefined {
  if (run.status === 'LOST') {
    const error = {
      code: 'SAGA_TIMEOUT',
      message: 'the run of the request with this Idempotency-Key was lost with its runner; its outcome is unknown',
      http: 504,
    };
    return { outcome: 'TIMEOUT', http: 504, error };
  }
  if (run.status === 'WAITING') {
    // waits: parked (for days, maybe): answered as the first request was, 202 with its Location
    // (sendResult), not held a timeout and refused 409 at every retry while it waits
    const waitingOn = 'waitingOn' in run && run.waitingOn !== undefined ? { waitingOn: run.waitingOn } : {};
    const response = { status: 'WAITING', runId: run.requestId, ...waitingOn };
    return { outcome: 'WAITING', http: 202, response, runId: run.requestId };
  }
  if (run.status !== 'DONE' || run.outcome === undefined || run.http === undefined) return undefined;
  return {
    outcome: run.outcome,
    http: run.http,
    ...(run.response !== undefined ? { response: run.response } : {}),
    ...(run.error !== undefined ? { error: run.error } : {}),
  };
}

/** Send a stored response again. */
export function replay(reply: FastifyReply, response: StoredResponse): void {
  reply.code(response.status).headers(response.headers).header('idempotent-replayed', 'true');
  if (response.omitted) {
    // stored without its body (over gateway.idempotency.maxBody): the status alone
    reply.header('idempotent-body-omitted', 'true').removeHeader('content-type');
    reply.send();
    return;
  }
  reply.send(response.body);
}
