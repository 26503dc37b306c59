import type { FastifyReply } from 'fastify';
import type { SagaResult } from '../../core/types.js';
import type { Admitted } from '../forms/admit.js';
import type { Format } from '../apis/saga-path.js';
import { render, TOO_LARGE } from '../formats/index.js';
import { problemFor, sendProblem } from '../http/helpers/problem.js';
import { failureProblem, successStatus } from './outcome.js';

/**
 * Send a saga's result as the one-shot form answers it (DESIGN §5, §8): a failure as
 * problem+json, a success in the negotiated `format`, at most `maxResponse` bytes. Used for a
 * run's own result and for one read back from its status (an Idempotency-Key's replay).
 */
export function sendResult(
  reply: FastifyReply,
  requestId: string,
  admitted: Admitted,
  format: Format,
  result: SagaResult,
  maxResponse: number,
): FastifyReply {
  if (result.outcome === 'FAIL' || result.outcome === 'TIMEOUT') {
    return sendProblem(reply, failureProblem(result, requestId));
  }
  const status = successStatus(result);
  // waits: a parked run's outcome will be at its status (issue 21)
  if (result.outcome === 'WAITING' || result.outcome === 'SUSPENDED')
    reply.header('location', `/api/status/${encodeURIComponent(result.runId ?? requestId)}`);
  if (status === 204 || status === 205) return reply.code(status).send();
  const rendered = render(format, result.response, maxResponse, admitted.api.settings.csp);
  if (rendered === TOO_LARGE) {
    reply.log.warn({ format, maxResponse }, 'response over gateway.limits.maxResponse refused');
    return sendProblem(
      reply,
      problemFor('RESPONSE_TOO_LARGE', requestId, 'the response is larger than gateway.limits.maxResponse'),
    );
  }
  if (!rendered)
    return sendProblem(reply, problemFor('NOT_ACCEPTABLE', requestId, `the response has no ${format} form`));
  if (rendered.headers) reply.headers(rendered.headers);
  if (admitted.sagaPath.extension === undefined) reply.header('vary', 'Accept');
  return reply.code(status).type(rendered.contentType).send(rendered.body);
}
