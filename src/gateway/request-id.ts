import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** Incoming ids that are echoed back: short, and only characters that are safe in headers and logs. */
const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request id: the caller's `X-Request-Id` when it is sane, else a new UUID. */
export function requestIdFor(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  if (typeof incoming === 'string' && SANE_ID.test(incoming)) return incoming;
  return randomUUID();
}
