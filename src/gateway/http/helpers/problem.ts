import type { FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_CODES, httpFor, isKnownCode, type ErrorInfo } from '../../../core/errors.js';

/**
 * problem+json bodies (RFC 9457, DESIGN §5). `type` is `https://sagaway.dev/errors/<CODE>`: a
 * stable URI per code that docs/errors.md documents, so clients can switch on either `type` or
 * `code`.
 */

/** Base of the `type` URI of every problem. */
export const PROBLEM_TYPE_BASE = 'https://sagaway.dev/errors/';

/** The body of an `application/problem+json` response. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  code: string;
  detail: string;
  requestId: string;
  /** a failed saga's compensations: all undone, or some failed (absent: nothing to undo) */
  compensation?: 'COMPLETED' | 'PARTIAL';
}

const SAFE_CODE = /^[A-Z][A-Z0-9_]{1,63}$/;
const titleCache = new Map<string, string>();

/** A human title for a code: the declared one, else the code in words (`OUT_OF_STOCK` -> `Out Of Stock`). */
export function titleFor(code: string): string {
  if (isKnownCode(code)) return ERROR_CODES[code].title;
  let title = titleCache.get(code);
  if (title === undefined) {
    title = code
      .toLowerCase()
      .split('_')
      .filter((w) => w !== '')
      .map((w) => w[0]!.toUpperCase() + w.slice(1))
      .join(' ');
    if (titleCache.size < 1000) titleCache.set(code, title);
  }
  return title;
}

/** Build a problem from error info; an unusable code or status becomes INTERNAL / 500. */
export function toProblem(error: ErrorInfo, requestId: string, status?: number): Problem {
  const code = SAFE_CODE.test(error.code) ? error.code : 'INTERNAL';
  let http = status ?? error.http ?? httpFor(code);
  if (!Number.isInteger(http) || http < 400 || http > 599) http = 500;
  const detail =
    typeof error.message === 'string' && error.message !== '' ? error.message.slice(0, 1000) : titleFor(code);
  const problem: Problem = {
    type: PROBLEM_TYPE_BASE + code,
    title: titleFor(code),
    status: http,
    code,
    detail,
    requestId,
  };
  if (error.compensation === 'COMPLETED' || error.compensation === 'PARTIAL') problem.compensation = error.compensation;
  return problem;
}

/** Problem for one of our own codes with a fixed, safe message. */
export function problemFor(code: keyof typeof ERROR_CODES, requestId: string, detail?: string): Problem {
  return toProblem({ code, message: detail ?? ERROR_CODES[code].title }, requestId);
}

/** Send a problem as `application/problem+json`. */
export function sendProblem(reply: FastifyReply, problem: Problem, headers?: Record<string, string>): FastifyReply {
  if (headers) reply.headers(headers);
  return reply.code(problem.status).type('application/problem+json').send(JSON.stringify(problem));
}

/** Seconds a client is told to wait before retrying after a 503. */
export const RETRY_AFTER_SECONDS = 1;

/**
 * onSend hook of the whole gateway: every 503 (a broker or database outage surfacing as
 * RUNNER_UNAVAILABLE or STATE_UNAVAILABLE, an unreadable journal) gets a `Retry-After` when its
 * route did not set one. Callback style: it runs on every response, and an async hook costs a
 * promise each.
 */
export function retryAfterOn503(
  _request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (err: Error | null, payload?: unknown) => void,
): void {
  if (reply.statusCode === 503 && !reply.hasHeader('retry-after'))
    reply.header('retry-after', String(RETRY_AFTER_SECONDS));
  done(null, payload);
}
