import type { FastifyInstance } from 'fastify';
import { toErrorInfo } from '../core/errors.js';
import type { RunStatus } from '../runner/journal.js';
import { ANONYMOUS } from './auth.js';
import { extractCredential } from './auth-credentials.js';
import type { GatewayContext } from './context.js';
import { problemFor, sendProblem, toProblem } from './problem.js';

/**
 * `GET /api/status/<requestId>` (DESIGN §9): the outcome of a journaled saga run, for a caller
 * whose connection broke. Same credentials as the request; the journal record is keyed by the
 * caller and the request id, so another caller (or an unknown id, or no journal at all) gets
 * the same 404 and cannot tell which. A journal that cannot be read answers 503 with
 * Retry-After.
 *
 * Every other 503 of the gateway (a broker or database outage surfacing as RUNNER_UNAVAILABLE
 * or STATE_UNAVAILABLE) also gets a `Retry-After` here when its route did not set one.
 */

/** Where run statuses come from (the journals; see runner/journal.ts). */
export interface StatusSource {
  lookup(sub: string, requestId: string): Promise<RunStatus | undefined>;
}

/** Seconds a client is told to wait before retrying after a 503. */
export const RETRY_AFTER_SECONDS = 1;

const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Register the status route (and the 503 Retry-After default). */
export function registerStatusRoute(app: FastifyInstance, ctx: GatewayContext, source: StatusSource | undefined): void {
  // Callback style: this hook runs on every response, and an async hook costs a promise each.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (reply.statusCode === 503 && !reply.hasHeader('retry-after'))
      reply.header('retry-after', String(RETRY_AFTER_SECONDS));
    done(null, payload);
  });

  app.get<{ Params: { requestId: string } }>('/api/status/:requestId', async (request, reply) => {
    const notFound = () => sendProblem(reply, problemFor('NOT_FOUND', request.id, 'no such request'));
    const credential = extractCredential(request.headers, ctx.settings.auth.cookie, undefined);
    if (credential === 'invalid') return unauthorized();
    const principal = credential === null ? ANONYMOUS : await ctx.auth.verify(credential);
    if (!principal) return unauthorized();
    const requestId = request.params.requestId;
    if (!source || !SANE_ID.test(requestId)) return notFound();
    let status: RunStatus | undefined;
    try {
      status = await source.lookup(principal.sub, requestId);
    } catch (err) {
      const info = toErrorInfo(err);
      request.log.warn({ code: info.code }, 'journal unavailable');
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
