import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * Request ids (issue 9 item 4). Every request gets a run id made here: a random UUID (122 random
 * bits), unique and not guessable, so that no client can make two runs share an id, take over
 * another run's journal record or read another run's status. It is `request.id`, the
 * `X-Request-Id` response header, the problem+json `requestId`, the id of `/api/status/<id>` and
 * the saga run's id (`SagaRequest.runId`: idempotency keys `<id>:<stepId>`, undo keys
 * `<id>:<stepId>:undo`, logs). A stream's polls are runs of their own: `<id>.1`, `<id>.2`, ...
 *
 * A client's own `X-Request-Id` is a correlation id only: logged with the request, echoed as
 * `X-Correlation-Id`, stored with a journaled run so that the caller can look its run up by it
 * (scoped to the caller; the first run that carried it), and never used as a key of anything.
 */

/** Incoming ids that are echoed back: short, and only characters that are safe in headers and logs. */
const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Whether `id` may be echoed, logged and looked up (run ids and correlation ids alike). */
export function isSaneId(id: string): boolean {
  return SANE_ID.test(id);
}

/** fastify's `genReqId`: a new run id for every request, whatever the client sent. */
export function requestIdFor(): string {
  return randomUUID();
}

/** The client's `X-Request-Id` when it is sane, else undefined (an insane one is ignored, never echoed). */
export function correlationIdOf(headers: IncomingHttpHeaders): string | undefined {
  const incoming = headers['x-request-id'];
  return typeof incoming === 'string' && SANE_ID.test(incoming) ? incoming : undefined;
}
