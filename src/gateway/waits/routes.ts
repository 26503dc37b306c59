import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SagawayError, toErrorInfo } from '../../core/errors.js';
import { parseDuration } from '../../core/units.js';
import { isObject } from '../../core/path.js';
import { MAX_CALLBACK_TOKEN, MAX_SIGNAL_TTL_MS, type WaitService } from '../../core/waits.js';
import type { GatewayContext } from '../context.js';
import { HTML_TYPE } from '../formats/html.js';
import { problemFor, sendProblem, toProblem } from '../http/helpers/problem.js';
import { isSaneId } from '../http/helpers/request-id.js';
import { CALLBACK_PAGE_CSP, callbackPage } from './callback-page.js';
import { principalOf } from './principal.js';

/**
 * The wait routes (issue 21, docs/waits.md):
 *
 *   POST /api/runs/<runId>/signals/<name>   the body resumes that run's wait on <name>
 *   POST /api/runs/<runId>/cancel           wakes the waiting run with CANCELLED
 *   POST /api/signals/<name>                { key, data, messageId, ttl }: by correlation key
 *   GET  /api/callbacks/<token>             a confirmation page (a GET never decides)
 *   POST /api/callbacks/<token>             ?decision=reject rejects; the token is the permission
 *
 * A decision only writes the wait's resolution: the answer is 202 and the run resumes on a
 * poller of its runner. Every refusal is problem+json with a stable code.
 */

/** Signal names: as in the saga format (saga/wait-schema.ts). */
const SIGNAL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/** Body bytes of a signal route (the wait's own limit is checked again on the body: decide.ts). */
const SIGNAL_BODY_LIMIT = 128 * 1024;

type Params = { runId?: string; name?: string; token?: string };

/** Register the wait routes; `signals` undefined (no runner parks runs) = every wait route is 404. */
export function registerWaitRoutes(app: FastifyInstance, ctx: GatewayContext, signals: WaitService | undefined): void {
  const guarded =
    (fn: (request: FastifyRequest<{ Params: Params }>, reply: FastifyReply) => Promise<FastifyReply>) =>
    async (request: FastifyRequest<{ Params: Params }>, reply: FastifyReply): Promise<FastifyReply> => {
      reply.header('cache-control', 'no-store');
      if (!signals?.active) return sendProblem(reply, problemFor('WAIT_NOT_FOUND', request.id, 'no such wait'));
      try {
        return await fn(request, reply);
      } catch (err) {
        const info = toErrorInfo(err);
        if (!(err instanceof SagawayError)) request.log.error({ err: info }, 'wait route failed');
        return sendProblem(reply, toProblem(info, request.id));
      }
    };
  const principal = async (request: FastifyRequest) => {
    const p = await principalOf(ctx, request);
    if (p === undefined) throw new SagawayError('UNAUTHORIZED', 'the credential is not valid');
    return p;
  };
  // never above the gateway's own limit (an operator's smaller bodyLimit holds here too)
  const opts = { bodyLimit: Math.min(SIGNAL_BODY_LIMIT, ctx.settings.limits.bodyLimit) };

  app.post<{ Params: Params }>(
    '/api/runs/:runId/signals/:name',
    opts,
    guarded(async (request, reply) => {
      const { runId, name } = checked(request.params);
      const decided = await signals!.signalRun(runId, name, request.body ?? {}, await principal(request));
      return reply.code(202).send(decided);
    }),
  );
  app.post<{ Params: Params }>(
    '/api/runs/:runId/cancel',
    opts,
    guarded(async (request, reply) => {
      const runId = request.params.runId ?? '';
      if (!isSaneId(runId)) throw new SagawayError('WAIT_NOT_FOUND', 'no such wait');
      return reply.code(202).send(await signals!.cancel(runId, await principal(request)));
    }),
  );
  app.post<{ Params: Params }>(
    '/api/signals/:name',
    opts,
    guarded(async (request, reply) => {
      const name = request.params.name ?? '';
      if (!SIGNAL_NAME.test(name)) throw new SagawayError('WAIT_NOT_FOUND', 'no such signal');
      const outcome = await signals!.signalByKey(name, keyedSignal(request.body), await principal(request));
      return reply.code(outcome.duplicate ? 200 : 202).send(outcome);
    }),
  );

  // The callback form posts application/x-www-form-urlencoded: its (empty) body is ignored here only.
  void app.register(async (scope) => {
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 4096 },
      (_r, _b, done) => done(null, {}),
    );
    scope.get<{ Params: Params }>(
      '/api/callbacks/:token',
      guarded(async (request, reply) => {
        const token = tokenOf(request.params);
        const info = await signals!.callbackInfo(token);
        return reply
          .header('content-security-policy', CALLBACK_PAGE_CSP)
          .header('referrer-policy', 'no-referrer')
          .type(HTML_TYPE)
          .send(callbackPage(`/api/callbacks/${token}`, info));
      }),
    );
    scope.post<{ Params: Params; Querystring: { decision?: unknown } }>(
      '/api/callbacks/:token',
      opts,
      guarded(async (request, reply) => {
        const token = tokenOf(request.params);
        const decision = (request.query as { decision?: unknown }).decision;
        if (decision !== undefined && decision !== 'reject' && decision !== 'approve') {
          throw new SagawayError('SIGNAL_INVALID', 'decision is approve or reject');
        }
        const decided = await signals!.callback(
          token,
          decision === 'reject',
          request.body ?? {},
          await principal(request),
        );
        return reply.code(202).send(decided);
      }),
    );
  });
}

function checked(params: Params): { runId: string; name: string } {
  const runId = params.runId ?? '';
  const name = params.name ?? '';
  if (!isSaneId(runId) || !SIGNAL_NAME.test(name)) throw new SagawayError('WAIT_NOT_FOUND', 'no such wait');
  return { runId, name };
}

function tokenOf(params: Params): string {
  const token = params.token ?? '';
  if (token.length === 0 || token.length > MAX_CALLBACK_TOKEN) throw new SagawayError('WAIT_NOT_FOUND', 'no such wait');
  return token;
}

/** The body of `POST /api/signals/<name>`, checked: `key` (string or number), `data`, `messageId`, `ttl`. */
function keyedSignal(body: unknown): { key: string; data: unknown; messageId: string; ttlMs: number } {
  const invalid = (m: string) => new SagawayError('SIGNAL_INVALID', m);
  if (!isObject(body)) throw invalid('the body is { key, data, messageId, ttl }');
  const raw = body['key'];
  const key = typeof raw === 'number' && Number.isFinite(raw) ? String(raw) : raw;
  if (typeof key !== 'string' || key === '' || key.length > 512)
    throw invalid('key: a string or number (at most 512 characters)');
  const messageId = body['messageId'] ?? randomUUID();
  if (typeof messageId !== 'string' || !/^[\x21-\x7e]{1,128}$/.test(messageId)) {
    throw invalid('messageId: 1 to 128 printable characters');
  }
  const ttlMs = body['ttl'] === undefined ? 0 : parseDuration(body['ttl']);
  if (ttlMs === undefined || ttlMs > MAX_SIGNAL_TTL_MS) throw invalid('ttl: a duration of at most 7 days');
  return { key, data: body['data'] ?? null, messageId, ttlMs };
}
