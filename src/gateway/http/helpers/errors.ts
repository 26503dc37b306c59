import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { SagawayError } from '../../../core/errors.js';
import { problemFor, sendProblem, toProblem } from './problem.js';

/**
 * The gateway's error handlers: every error a client can see is problem+json with a requestId
 * (DESIGN §5), including fastify's own (body parsing, bad URLs) and Node's (a malformed request
 * line or headers, a request not received in time). Our own errors keep their code; fastify's
 * get the documented codes; anything else is a 500 INTERNAL whose details go to the log only.
 */

type Code = Parameters<typeof problemFor>[0];

const FASTIFY_CODES: Readonly<Record<string, Code>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'INVALID_BODY',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_INVALID_JSON_BODY: 'INVALID_JSON',
  // A path that cannot be decoded names no API (docs/gateway.md, Routing).
  FST_ERR_BAD_URL: 'NOT_FOUND',
  FST_ERR_MAX_PARAM_LENGTH: 'URI_TOO_LONG',
};

const BY_STATUS: Readonly<Record<number, Code>> = {
  400: 'BAD_REQUEST',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  408: 'REQUEST_TIMEOUT',
  413: 'PAYLOAD_TOO_LARGE',
  414: 'URI_TOO_LONG',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
  431: 'HEADERS_TOO_LARGE',
  503: 'SERVICE_UNAVAILABLE',
};

/** Fastify error handler producing problem+json. */
export function handleError(
  error: FastifyError | SagawayError | Error,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  if (error instanceof SagawayError) {
    if (error.http >= 500) request.log.error({ err: error }, 'request failed');
    return sendProblem(reply, toProblem(error.toInfo(), request.id));
  }
  const code = (error as FastifyError).code;
  const status = (error as FastifyError).statusCode ?? 0;
  // Any other client error of fastify's (a body stream that broke off...) is a plain 400.
  const mapped =
    (code && FASTIFY_CODES[code]) || BY_STATUS[status] || (status >= 400 && status < 500 ? 'BAD_REQUEST' : undefined);
  if (mapped) return sendProblem(reply, problemFor(mapped, request.id));
  request.log.error({ err: error }, 'unexpected error');
  return sendProblem(reply, problemFor('INTERNAL', request.id));
}

/**
 * fastify's `frameworkErrors`: errors found while routing (a bad percent escape, an over-long
 * path), before any hook ran, so the headers every response carries are set here.
 */
export function handleFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id);
  reply.header('x-content-type-options', 'nosniff');
  handleError(error, request, reply);
}

const CLIENT_ERRORS: Readonly<Record<string, Code>> = {
  ERR_HTTP_REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
  HPE_HEADER_OVERFLOW: 'HEADERS_TOO_LARGE',
};

/**
 * Node's `clientError` (via fastify's `clientErrorHandler`): the request line or headers could
 * not be parsed, or the request did not arrive within `headerTimeout`/`bodyTimeout`. There is
 * no request object: a minimal problem+json is written to the raw socket (with a new request id,
 * echoing nothing the client sent), then the connection is closed.
 */
export function handleClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  // A response already begun cannot be replaced by another one.
  const current = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !current?.headersSent) {
    const id = randomUUID();
    const problem = problemFor(CLIENT_ERRORS[err.code ?? ''] ?? 'BAD_REQUEST', id);
    const body = JSON.stringify(problem);
    socket.write(
      `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}\r\n` +
        'content-type: application/problem+json\r\n' +
        `content-length: ${Buffer.byteLength(body)}\r\n` +
        `x-request-id: ${id}\r\n` +
        'x-content-type-options: nosniff\r\n' +
        'connection: close\r\n\r\n' +
        body,
    );
  }
  socket.destroy();
}
