import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { SagawayError } from '../core/errors.js';
import { problemFor, sendProblem, toProblem } from './problem.js';

/**
 * The gateway's error handler: our own errors keep their code; fastify's request-shape errors
 * get the documented codes (413 PAYLOAD_TOO_LARGE, 415 UNSUPPORTED_MEDIA_TYPE, 400 INVALID_JSON
 * or INVALID_BODY); anything else is a 500 INTERNAL whose details go to the log only.
 */

const FASTIFY_CODES: Readonly<Record<string, Parameters<typeof problemFor>[0]>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'INVALID_BODY',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_INVALID_JSON_BODY: 'INVALID_JSON',
  FST_ERR_BAD_URL: 'NOT_FOUND',
};

const BY_STATUS: Readonly<Record<number, Parameters<typeof problemFor>[0]>> = {
  400: 'INVALID_BODY',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
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
  const mapped = (code && FASTIFY_CODES[code]) || BY_STATUS[(error as FastifyError).statusCode ?? 0];
  if (mapped) return sendProblem(reply, problemFor(mapped, request.id));
  request.log.error({ err: error }, 'unexpected error');
  return sendProblem(reply, problemFor('INTERNAL', request.id));
}
