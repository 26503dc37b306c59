import type { FastifyInstance } from 'fastify';
import { toErrorInfo } from '../../core/errors.js';
import type { AnyRunStatus, LookupOptions } from '../../runner/status.js';
import type { JournaledRun } from '../../runner/orchestrator/journal-reader.js';
import { callerKey } from '../../core/caller.js';
import { ANONYMOUS } from '../auth/authenticator.js';
import { extractCredential } from '../auth/credentials.js';
import type { GatewayContext } from '../context.js';
import { problemFor, sendProblem, toProblem } from './problem.js';
import { isSaneId } from './request-id.js';

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
 *
 * Every other 503 of the gateway (a broker or database outage surfacing as RUNNER_UNAVAILABLE
 * or STATE_UNAVAILABLE) also gets a `Retry-After` here when its route did not set one.
 */

/** Where run statuses come from: the journals, else the outcome buckets (runner/status.ts). */
export interface StatusSource {
  /** `scope`: the caller's (core/caller.ts callerKey); `id`: a run id, or with `byCorrelation` also a correlation id */
  lookup(scope: string, id: string, options?: LookupOptions): Promise<AnyRunStatus | undefined>;
  /** the latest runs, newest first (the console); absent = none listed */
  recent?(limit: number): Promise<JournaledRun[]>;
}

/** Seconds a client is told to wait before retrying after a 503. */
export const RETRY_AFTER_SECONDS = 1;

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
