import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SagawayError, toErrorInfo } from '../../core/errors.js';
import { isObject } from '../../core/path.js';
import { RUN_STATES, type RunAdmin, type RunQuery, type RunState } from '../../core/runs.js';
import type { WaitService } from '../../core/waits.js';
import type { GatewayContext } from '../context.js';
import { adminCaller, consoleGuard, type Guarded } from '../console/access.js';
import type { OnUnauthorized } from '../forms/admit.js';
import { problemFor, sendProblem, toProblem } from '../http/helpers/problem.js';
import { isSaneId } from '../http/helpers/request-id.js';

/**
 * The run routes (issue 22, docs/runs.md), behind `gateway.admin` (its roles, else loopback
 * clients only, by the console's rules: gateway/console/access.ts):
 *
 *   GET  /api/runs?saga=&status=&since=&until=&cursor=&limit=   journaled runs, newest first
 *   POST /api/runs/<runId>/redrive   { fromStep, input?, dryRun?, reason }
 *   POST /api/runs/<runId>/abort     { reason }: a SUSPENDED run's compensations run; a WAITING
 *                                    run is cancelled through its wait (gateway/waits/)
 *
 * Everyone else gets the gateway's plain 404, as for the console. Every refusal is problem+json
 * with a stable code.
 */

/** Runs on one page: default and most. */
export const DEFAULT_RUNS_LIMIT = 50;
export const MAX_RUNS_LIMIT = 200;
/** Body bytes of a redrive (its new input included) or an abort. */
const BODY_LIMIT = 256 * 1024;
/** A saga or step id: any name of 1 to 128 characters (saga/schema.ts NameOf), looked up, never echoed. */
const isName = (v: string): boolean => v.length > 0 && v.length <= 512 && [...v].length <= 128;

type Params = { runId?: string };

/** Who may use the run routes: `gateway.admin`'s roles, else loopback (the console's rules). */
export function adminGuard(ctx: GatewayContext): Guarded {
  return { path: '/api/runs', roles: ctx.settings.admin.roles };
}

/** Register the run routes; without `runs` (no journal anywhere) each answers 404 to an admitted caller. */
export function registerRunRoutes(
  app: FastifyInstance,
  ctx: GatewayContext,
  runs: RunAdmin | undefined,
  waits?: WaitService,
  onUnauthorized?: OnUnauthorized,
): void {
  const guard = consoleGuard(ctx, adminGuard(ctx), onUnauthorized);
  const handled =
    (fn: (request: FastifyRequest<{ Params: Params }>, reply: FastifyReply, runs: RunAdmin) => Promise<unknown>) =>
    async (request: FastifyRequest<{ Params: Params }>, reply: FastifyReply): Promise<FastifyReply> => {
      reply.header('cache-control', 'no-store');
      if (!runs) return sendProblem(reply, problemFor('RUN_NOT_FOUND', request.id, 'no runner journals its runs'));
      try {
        return reply.send(await fn(request, reply, runs));
      } catch (err) {
        const info = toErrorInfo(err);
        if (!(err instanceof SagawayError)) request.log.error({ err: info }, 'run route failed');
        return sendProblem(reply, toProblem(info, request.id));
      }
    };
  const opts = { onRequest: guard, bodyLimit: BODY_LIMIT };

  app.get<{ Params: Params }>(
    '/api/runs',
    { onRequest: guard },
    handled(async (request, _reply, r) => r.list(runQuery(request.query))),
  );
  app.post<{ Params: Params }>(
    '/api/runs/:runId/redrive',
    opts,
    handled(async (request, reply, r) => {
      const body = isObject(request.body) ? request.body : {};
      const fromStep = body['fromStep'] ?? 'failed';
      if (typeof fromStep !== 'string' || !isName(fromStep)) throw invalid('fromStep: "failed" or a step id');
      const input = body['input'];
      if (input !== undefined && !isObject(input)) throw invalid('input: an object (the saga input)');
      const dryRun = body['dryRun'] ?? false;
      if (typeof dryRun !== 'boolean') throw invalid('dryRun: true or false');
      const outcome = await r.redrive(runIdOf(request.params), {
        fromStep,
        ...(input !== undefined ? { input } : {}),
        dryRun,
        reason: reasonOf(body, !dryRun),
        by: adminCaller(request),
      });
      reply.code(outcome.dryRun ? 200 : 202);
      return outcome;
    }),
  );
  app.post<{ Params: Params }>(
    '/api/runs/:runId/abort',
    opts,
    handled(async (request, reply, r) => {
      const body = isObject(request.body) ? request.body : {};
      const runId = runIdOf(request.params);
      const reason = reasonOf(body, true);
      try {
        const outcome = await r.abort(runId, reason, adminCaller(request));
        reply.code(202);
        return outcome;
      } catch (err) {
        // a WAITING run is cancelled through its wait (it ends FAIL RUN_CANCELLED, after its compensations)
        const waiting = err instanceof SagawayError && err.code === 'RUN_NOT_SUSPENDED' && /WAITING/.test(err.message);
        if (!waiting || !waits?.active || !waits.cancelByOperator) throw err;
        request.log.info({ runId, by: adminCaller(request), reason }, 'waiting run cancelled by an operator');
        reply.code(202);
        return { runId, cancelled: await waits.cancelByOperator(runId) };
      }
    }),
  );
}

function invalid(message: string): SagawayError {
  return new SagawayError('VALIDATION_FAILED', message);
}

function runIdOf(params: Params): string {
  const runId = params.runId ?? '';
  if (!isSaneId(runId)) throw new SagawayError('RUN_NOT_FOUND', 'no such run');
  return runId;
}

/** The operator's reason: required for what changes a run, at most 512 characters. */
function reasonOf(body: Record<string, unknown>, required: boolean): string {
  const reason = body['reason'];
  if (reason === undefined && !required) return '';
  if (typeof reason !== 'string' || reason.trim() === '' || reason.length > 512)
    throw invalid('reason: why (1 to 512 characters)');
  return reason;
}

/** The list's query string, checked. */
export function runQuery(raw: unknown): RunQuery {
  const q = isObject(raw) ? raw : {};
  const one = (name: string): string | undefined => {
    const v = q[name];
    if (v === undefined || v === '') return undefined;
    if (typeof v !== 'string') throw invalid(`${name}: given once`);
    return v;
  };
  const saga = one('saga');
  if (saga !== undefined && !isName(saga)) throw invalid('saga: a saga id');
  const status = one('status');
  if (status !== undefined && !RUN_STATES.includes(status as RunState))
    throw invalid(`status: one of ${RUN_STATES.join(', ')}`);
  const limitText = one('limit');
  const limit = limitText === undefined ? DEFAULT_RUNS_LIMIT : Number(limitText);
  if (!/^\d{1,4}$/.test(limitText ?? '1') || limit < 1 || limit > MAX_RUNS_LIMIT)
    throw invalid(`limit: 1 to ${MAX_RUNS_LIMIT}`);
  const since = instant(one('since'), 'since');
  const until = instant(one('until'), 'until');
  const cursor = one('cursor');
  if (cursor !== undefined && cursor.length > 512) throw new SagawayError('INVALID_CURSOR', 'the cursor is too long');
  return {
    limit,
    ...(saga !== undefined ? { saga } : {}),
    ...(status !== undefined ? { status: status as RunState } : {}),
    ...(since !== undefined ? { since } : {}),
    ...(until !== undefined ? { until } : {}),
    ...(cursor !== undefined ? { cursor } : {}),
  };
}

/** An instant: epoch ms, or an ISO 8601 date-time. */
function instant(text: string | undefined, name: string): number | undefined {
  if (text === undefined) return undefined;
  const t = /^\d{1,15}$/.test(text) ? Number(text) : text.length <= 40 ? Date.parse(text) : NaN;
  if (!Number.isSafeInteger(t)) throw invalid(`${name}: epoch milliseconds or an ISO 8601 date-time`);
  return t;
}
