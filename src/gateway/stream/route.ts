import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SagawayError } from '../../core/errors.js';
import { callerKey } from '../../core/caller.js';
import type { Principal } from '../../core/types.js';
import type { GatewayContext } from '../context.js';
import type { CursorPosition } from './cursor.js';
import { bodyInput, usesBody } from '../request/input.js';
import { problemFor, sendProblem } from '../http/helpers/problem.js';
import type { SagaRoutes } from '../apis/saga-routes.js';
import type { InputChecks } from '../request/validate-input.js';
import { StreamMember, type StreamShared } from './member.js';
import { PollGroups } from './group.js';
import { shareBase, shareBinding } from './share.js';
import type { ShareScope } from '../../config/settings.js';
import { isLongPoll, LONG_POLL_KEYS, LongPollRoute, type Audience } from './long-poll-route.js';
import { cursorBinding } from '../../core/caller.js';

/**
 * The stream form (`/api/stream/<path>`, DESIGN §7): checks that a saga serves the request (404,
 * 405, 401, 403 before the stream opens), checks the cursor (400 INVALID_CURSOR, or 204 for a
 * finished stream), admits the stream (429/503 with Retry-After), then hands the raw response to
 * a StreamMember served by a poll group (group.ts), shared with the streams of the same poll
 * when the API's share scope allows (share.ts).
 */

/** Seconds a refused client is told to wait. */
export const RETRY_AFTER_SECONDS = 5;

/** Headers of every stream response (DESIGN §7). */
const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
};

/** Query keys that belong to the gateway, not to the saga's INPUT. */
const GATEWAY_KEYS = ['lastEventId', 'access_token'];

/** The admission key of a caller (core/caller.ts): `jwt:<sub>`, `key:<name>`, or `anon:<address>`. */
export function clientOf(principal: Principal, ip: string): string {
  return callerKey(principal, ip);
}

function withoutGatewayKeys(query: Record<string, unknown>, keys = GATEWAY_KEYS): Record<string, unknown> {
  if (!keys.some((k) => Object.hasOwn(query, k))) return query;
  const copy = { ...query };
  for (const k of keys) delete copy[k];
  return copy;
}

/** The route handler of the stream form (`sagas`: the configured sagas, to refuse early). */
export function streamHandler(ctx: GatewayContext, sagas: SagaRoutes, inputs?: InputChecks) {
  const shared: StreamShared = {
    settings: ctx.settings.stream,
    timeoutMs: ctx.settings.limits.timeoutMs,
    maxResponse: ctx.settings.limits.maxResponse,
    service: ctx.service,
    cursors: ctx.cursors,
    registry: ctx.streams,
    metrics: ctx.metrics,
    log: ctx.log,
  };
  const groups = new PollGroups(shared);
  const longPoll = new LongPollRoute(ctx, shared);

  return async function handle(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const admitted = request.sagaway!;
    const refused = sagas.refusal(
      admitted.api.settings.runner,
      request.method,
      admitted.sagaPath.path,
      admitted.principal,
      true,
    );
    if (refused) {
      const headers: Record<string, string> | undefined =
        refused.code === 'METHOD_NOT_ALLOWED'
          ? { allow: refused.allow }
          : refused.code === 'UNAUTHORIZED'
            ? { 'www-authenticate': 'Bearer realm="sagaway"' }
            : undefined;
      return sendProblem(
        reply,
        problemFor(refused.code, request.id, 'detail' in refused ? refused.detail : undefined),
        headers,
      );
    }
    // HEAD cannot carry events: answer the headers a stream would have, run nothing.
    if (request.method === 'HEAD') return reply.code(200).headers(SSE_HEADERS).send();
    const path = admitted.sagaPath.path;
    const rawQuery = request.query as Record<string, unknown>;
    const api = admitted.api;
    const share = api.settings.stream?.share ?? ctx.settings.stream.share;
    // Tokens are bound to the share scope: the caller, or the API for `all`.
    const caller = shareBinding(share, api.prefix, admitted.principal);

    if (isLongPoll(rawQuery)) {
      // The long-poll form (long-poll-route.ts): the same checks, one JSON answer per request.
      const query = withoutGatewayKeys(rawQuery, LONG_POLL_KEYS);
      const body = usesBody(request.method);
      const input = body ? bodyInput(request.body) : query;
      const invalid = inputs?.check(request, input);
      if (invalid) return sendProblem(reply, invalid, { 'cache-control': 'private, no-store' });
      const runner = api.settings.runner;
      const base = feedBase(request, share, input, query, body);
      // Who else may be served this answer by a cache: only callers who need no credential.
      const audience: Audience =
        !api.settings.public || request.method !== 'GET'
          ? 'private'
          : share === 'all'
            ? 'public'
            : share === 'caller' && cursorBinding(admitted.principal) === 'anon'
              ? 'anon'
              : 'private';
      return longPoll.serve(request, reply, {
        audience,
        scope: {
          runner,
          method: request.method,
          path,
          input,
          query,
          binding: caller,
          ...(base !== undefined ? { base } : {}),
          anonymous: share === 'all',
          requestId: request.id,
          principal: admitted.principal,
          client: clientOf(admitted.principal, request.ip),
        },
      });
    }

    let start: CursorPosition | undefined;
    const header = request.headers['last-event-id'];
    const fromQuery = rawQuery['lastEventId'];
    const token =
      typeof header === 'string' && header !== ''
        ? header
        : typeof fromQuery === 'string' && fromQuery !== ''
          ? fromQuery
          : undefined;
    if (token !== undefined) {
      try {
        start = ctx.cursors.decode(path, caller, token);
      } catch (err) {
        if (err instanceof SagawayError) return sendProblem(reply, problemFor('INVALID_CURSOR', request.id));
        throw err;
      }
      // The stream already ended: 204 tells EventSource clients to stop reconnecting.
      if (start.end) return reply.code(204).send();
    }

    const query = withoutGatewayKeys(rawQuery);
    const input = usesBody(request.method) ? bodyInput(request.body) : query;
    const invalid = inputs?.check(request, input);
    if (invalid) return sendProblem(reply, invalid);

    const client = clientOf(admitted.principal, request.ip);
    const refusal = ctx.streams.admit(client);
    if (refusal) {
      ctx.metrics.reject(refusal);
      return sendProblem(reply, problemFor(refusal, request.id), { 'retry-after': String(RETRY_AFTER_SECONDS) });
    }
    if (start) ctx.metrics.resumes.inc();

    const credential = admitted.credential;
    const recheck = credential
      ? async (): Promise<boolean> => {
          const principal = await ctx.auth.verify(credential);
          return principal !== null && ctx.auth.authorize(api, principal).ok;
        }
      : undefined;

    reply.hijack();
    const res = reply.raw;
    // The headers set so far (x-request-id, nosniff, RateLimit...) go out with the stream's.
    res.writeHead(200, { ...(reply.getHeaders() as OutgoingHttpHeaders), ...SSE_HEADERS });
    res.flushHeaders();
    // A healthy stream may be silent between heartbeats: the connection idle timeout is for
    // one-shot requests; streams have their own liveness (heartbeat and stallTimeout).
    // (`fastify.inject`'s socket has no setTimeout: there is no connection to keep alive.)
    request.raw.socket.setTimeout?.(0);
    const member = new StreamMember(
      shared,
      { requestId: request.id, principal: admitted.principal, client, ...(recheck ? { recheck } : {}) },
      res,
    );
    // Counted now, with the time to the headers: onResponse only runs when the stream ends.
    request.streamed = true;
    ctx.metrics.observeRequest('stream', api.prefix, 200, reply.elapsedTime / 1000);
    // The client may have gone while we were checking: then no 'close' is coming any more.
    if (res.destroyed || request.raw.socket.destroyed) {
      member.stop();
      return reply;
    }
    const body = usesBody(request.method);
    const runner = api.settings.runner;
    const base = feedBase(request, share, input, query, body);
    groups.start(
      member,
      {
        runner,
        method: request.method,
        path,
        input,
        query,
        binding: caller,
        ...(base !== undefined ? { base } : {}),
        anonymous: share === 'all',
      },
      start ? { previous: start.previous, skip: start.index + 1 } : { skip: 0 },
    );
    return reply;
  };
}

/** The fixed part of the group key (share.ts) of the feed this admitted request asks for: the same for both forms. */
function feedBase(
  request: FastifyRequest,
  share: ShareScope,
  input: Record<string, unknown>,
  query: Record<string, unknown>,
  body: boolean,
): string | undefined {
  const { api, principal, sagaPath } = request.sagaway!;
  return shareBase({
    share,
    api: api.prefix,
    principal,
    runner: api.settings.runner,
    method: request.method,
    path: sagaPath.path,
    input,
    query,
    body,
  });
}
