import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../../core/types.js';
import { ApiMap, type CompiledApi } from '../apis/api-map.js';
import { parseSagaPath, FORM_PREFIX, type Form, type SagaPath } from '../apis/saga-path.js';
import type { AuthDecision } from '../auth/authenticator.js';
import { extractCredential, type Credential } from '../auth/credentials.js';
import { refusalDetail } from '../auth/refusal-detail.js';
import type { GatewayContext } from '../context.js';
import { problemFor, sendProblem } from '../http/helpers/problem.js';

const WWW_AUTHENTICATE = { 'www-authenticate': 'Bearer realm="sagaway"' };

/** What the gateway's checks established about an API request (set by `admit`). */
export interface Admitted {
  form: Form;
  api: CompiledApi;
  sagaPath: SagaPath;
  principal: Principal;
  credential: Credential | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** set on API routes once routing and auth passed */
    sagaway: Admitted | null;
    /** configured API prefix, for metrics labels */
    apiLabel: string;
    /** the response became an SSE stream (counted when its headers went out, not at its end) */
    streamed: boolean;
  }
}

/** An onRequest check in callback style (fastify's `onRequestHookHandler` without `this`). */
export type RequestCheck = (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => void;

/** What happens to a request refused for its credential (the rate limit counts it), then `send`. */
export type OnUnauthorized = (request: FastifyRequest, reply: FastifyReply, api: CompiledApi, send: () => void) => void;

/**
 * The onRequest check of both API forms, before any body is read: the API mapping (404), the
 * API's methods (405 with Allow), then auth (401, 403). Running it before body parsing means
 * that an unauthenticated caller cannot make the gateway read and parse a body. An admitted
 * request goes on to `next` (the form's further checks), called here rather than as hooks of
 * their own: each fastify hook costs its runner's step on every request (issue 23).
 */
export function admitter(ctx: GatewayContext, form: Form, onUnauthorized?: OnUnauthorized, next?: RequestCheck) {
  const prefix = FORM_PREFIX[form];
  // Callback style: most requests (public APIs, API keys) are decided without a promise.
  return function admit(request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void {
    const sagaPath = parseSagaPath(request.url, prefix, form === 'request');
    const api = sagaPath && ctx.apis.match(sagaPath.segments, request.method);
    if (!sagaPath || !api) {
      sendProblem(reply, problemFor('NOT_FOUND', request.id, ctx.apis.notFoundDetail(sagaPath?.segments)));
      return;
    }
    request.apiLabel = api.prefix;
    if (!ApiMap.allows(api, request.method)) {
      sendProblem(reply, problemFor('METHOD_NOT_ALLOWED', request.id, `${request.method} is not allowed here`), {
        allow: api.allow,
      });
      return;
    }
    const queryToken =
      form === 'stream' && ctx.settings.auth.queryToken && request.method === 'GET'
        ? (request.query as Record<string, unknown>)['access_token']
        : undefined;
    const credential = extractCredential(request.headers, ctx.settings.auth.cookie, queryToken);
    const finish = (decision: AuthDecision): void => {
      if (!decision.ok) {
        const headers = decision.code === 'UNAUTHORIZED' ? WWW_AUTHENTICATE : undefined;
        const detail = refusalDetail(ctx.settings.auth, decision, request.headers, credential);
        const send = (): void => void sendProblem(reply, problemFor(decision.code, request.id, detail), headers);
        if (decision.code === 'UNAUTHORIZED' && onUnauthorized) onUnauthorized(request, reply, api, send);
        else send();
        return;
      }
      request.sagaway = {
        form,
        api,
        sagaPath,
        principal: decision.principal,
        credential: credential === 'invalid' ? null : credential,
      };
      if (next !== undefined) next(request, reply, done);
      else done();
    };
    const decision = ctx.auth.decide(api, credential);
    // What the checks after auth throw goes to fastify, as a hook's throw would: inside this
    // `then` it would otherwise be an unhandled rejection (a client gone while its JWT was
    // verified has no address: the rate limit's request.ip is undefined).
    if (decision instanceof Promise)
      decision.then((d) => {
        try {
          finish(d);
        } catch (err) {
          done(err instanceof Error ? err : new Error(String(err)));
        }
      }, done);
    else finish(decision);
  };
}
