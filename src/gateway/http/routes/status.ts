import type { FastifyInstance } from 'fastify';
import { toErrorInfo } from '../../../core/errors.js';
import type { AnyRunStatus, StatusSource } from '../../../core/messages.js';
import { callerKey } from '../../../core/caller.js';
import { ANONYMOUS } from '../../auth/authenticator.js';
import { extractCredential } from '../../auth/credentials.js';
import type { GatewayContext } from '../../context.js';
import { problemFor, RETRY_AFTER_SECONDS, sendProblem, toProblem } from '../helpers/problem.js';
import { isSaneId } from '../helpers/request-id.js';

/**
 * `GET /api/status/<id>` (DESIGN §9): the outcome of a saga run (journaled, or kept in the
 * outcome bucket in distributed mode: issue 13), for a caller whose
 * connection broke. `<id>` is the run id (the `X-Request-Id` response header, made by the
 * gateway) or, for an authenticated caller, its own `X-Request-Id` (the first run that carried
 * it). Anonymous callers find runs by the run id only: their scope is their address, which
 * clients behind one NAT share, and a correlation id a client chose (an order number, a
 * counter) can be guessed by its neighbours, while a run id is a random UUID. Same credentials
 * as the request; the journal record is keyed by the caller's scope (core/caller.ts: `jwt:<sub>`,
 * `key:<name>`, `anon:<address>`) and the id, so another caller (or an unknown id, or no journal
 * at all) gets the same 404 and cannot tell which. A journal that cannot be read answers 503
 * with Retry-After.
 */

/** Register the status route. */
export function registerStatusRoute(app: FastifyInstance, ctx: GatewayContext, source: StatusSource | undefined): void {
  app.get<{ Params: { requestId: string } }>('/api/status/:requestId', async (request, reply) => {
    const notFound = () => sendProblem(reply, problemFor('NOT_FOUND', request.id, 'no such request'));
    const credential = extractCredential(request.headers, ctx.settings.auth.cookie, undefined);
    if (credential === 'invalid') return unauthorized();
    const principal = credential === null ? ANONYMOUS : await ctx.auth.verify(credential);
    if (!principal) return unauthorized();
    const requestId = request.params.requestId;
    if (!source || !isSaneId(requestId)) return notFound();
    let status: AnyRunStatus | undefined;
    try {
      // anonymous callers by run id only: see the comment at the top
      status = await source.lookup(callerKey(principal, request.ip), requestId, {
        byCorrelation: !principal.anonymous,
      });
    } catch (err) {
      const info = toErrorInfo(err);
      request.log.warn({ code: info.code }, 'status source unavailable');
      return sendProblem(reply, toProblem({ ...info, http: 503 }, request.id, 503), {
        'retry-after': String(RETRY_AFTER_SECONDS),
      });
    }
    if (!status) return notFound();
    reply.header('cache-control', 'no-store');
    return reply.type('application/json').send(JSON.stringify(status));

    function unauthorized() {
      return sendProblem(reply, problemFor('UNAUTHORIZED', request.id), {
        'www-authenticate': 'Bearer realm="sagaway"',
      });
    }
  });
}
