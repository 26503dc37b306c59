import type {
  FastifyInstance,
  FastifyPluginCallback,
  FastifyReply,
  FastifyRequest,
  onRequestHookHandler,
  onSendHookHandler,
  RouteHandlerMethod,
} from 'fastify';
import { ROUTED_METHODS } from '../apis/api-map.js';
import { FORM_PREFIX, type Form } from '../apis/saga-path.js';
import type { SagaRoutes } from '../apis/saga-routes.js';
import type { GatewayContext } from '../context.js';
import { problemFor, sendProblem } from '../http/helpers/problem.js';
import type { RateLimiter } from '../http/helpers/rate-limit.js';
import type { IdempotencyKeys } from '../request/idempotency-key.js';
import { isJsonContentType, usesBody } from '../request/input.js';
import { requestHandler } from '../request/route.js';
import { streamHandler } from '../stream/route.js';
import type { InputChecks } from '../request/validate-input.js';
import type { EndSource } from '../waits/prefer.js';
import { admitter } from './admit.js';

/**
 * The two API forms (DESIGN §8, §10) as fastify plugins: the one-shot form at `/api/request`,
 * the stream form at `/api/stream`. Each serves its prefix and every path below it, for every
 * routed method, behind the same onRequest checks, in this order: the API and auth (admit.ts),
 * the rate limit (which counts the authenticated principal), the JSON body type; all of them
 * before the body is read.
 */

/** What both forms are handed by the gateway. */
export interface FormOptions {
  ctx: GatewayContext;
  rate: RateLimiter;
  /** the sagas' inputSchema checks; absent when no saga declares one */
  checks?: InputChecks;
}

/**
 * onRequest check of the body methods (after auth): the body must be declared JSON, even when
 * empty. A browser sends a cross-site form or a no-cors fetch without a preflight only with a
 * form or text type, or with none: such a request can never start a saga.
 */
function requireJson(request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void {
  if (usesBody(request.method) && !isJsonContentType(request.headers['content-type'])) {
    sendProblem(reply, problemFor('UNSUPPORTED_MEDIA_TYPE', request.id, 'the body must be sent as application/json'));
    return;
  }
  done();
}

/** Route a form's prefix and everything below it to `handler`, behind the form's checks. */
function routeForm(
  app: FastifyInstance,
  { ctx, rate }: FormOptions,
  form: Form,
  handler: RouteHandlerMethod,
  onSend?: onSendHookHandler,
): void {
  // One hook: the checks after admit are its continuation, in this order.
  const onRequest: onRequestHookHandler = admitter(
    ctx,
    form,
    rate.onRefused,
    rate.active ? rate.followedBy(requireJson) : requireJson,
  );
  for (const url of [FORM_PREFIX[form], FORM_PREFIX[form] + '/*']) {
    app.route({
      method: [...ROUTED_METHODS],
      url,
      exposeHeadRoute: false,
      onRequest,
      handler,
      ...(onSend ? { onSend } : {}),
    });
  }
}

/** The one-shot form: `/api/request/<path>[.ext]`; a keyed request's response is stored by `keys`. */
export const requestForm: FastifyPluginCallback<FormOptions & { keys: IdempotencyKeys; ends?: EndSource }> = (
  app,
  options,
  done,
) => {
  const handler = requestHandler(options.ctx, options.keys, options.checks, options.ends);
  routeForm(app, options, 'request', handler, options.keys.onSend);
  done();
};

/** The stream form: `/api/stream/<path>`; `sagas` refuses before the stream opens what no saga would serve. */
export const streamForm: FastifyPluginCallback<FormOptions & { sagas: SagaRoutes }> = (app, options, done) => {
  routeForm(app, options, 'stream', streamHandler(options.ctx, options.sagas, options.checks));
  done();
};
