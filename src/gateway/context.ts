import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { GatewaySettings } from '../config/settings.js';
import type { Principal } from '../core/types.js';
import type { SagaService } from '../systems/system.js';
import { ApiMap, type CompiledApi } from './api-map.js';
import type { Authenticator } from './auth.js';
import { extractCredential, type Credential } from './auth-credentials.js';
import type { CursorCodec } from './cursor.js';
import type { GatewayMetrics } from './metrics.js';
import { problemFor, sendProblem } from './problem.js';
import { parseSagaPath, type SagaPath } from './saga-path.js';
import type { StreamRegistry } from './stream-limits.js';

/** Everything the routes of one gateway share, built once. */
export interface GatewayContext {
  settings: GatewaySettings;
  service: SagaService;
  apis: ApiMap;
  auth: Authenticator;
  cursors: CursorCodec;
  metrics: GatewayMetrics;
  streams: StreamRegistry;
  log: FastifyBaseLogger;
}

/** Which form a route serves. */
export type Form = 'request' | 'stream';

/** The URL prefix of each form. */
export const FORM_PREFIX: Readonly<Record<Form, string>> = { request: '/api/request', stream: '/api/stream' };

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

/**
 * The onRequest check of both API forms, before any body is read: the API mapping (404), the
 * API's methods (405 with Allow), then auth (401, 403). Running it before body parsing means
 * that an unauthenticated caller cannot make the gateway read and parse a body.
 */
export function admitter(ctx: GatewayContext, form: Form) {
  const prefix = FORM_PREFIX[form];
  return async function admit(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    const sagaPath = parseSagaPath(request.url, prefix, form === 'request');
    const api = sagaPath && ctx.apis.match(sagaPath.segments);
    if (!sagaPath || !api) {
      return sendProblem(reply, problemFor('NOT_FOUND', request.id, 'no API serves this path'));
    }
    request.apiLabel = api.prefix;
    if (!ApiMap.allows(api, request.method)) {
      return sendProblem(reply, problemFor('METHOD_NOT_ALLOWED', request.id, `${request.method} is not allowed here`), {
        allow: api.allow,
      });
    }
    const queryToken =
      form === 'stream' && ctx.settings.auth.queryToken && request.method === 'GET'
        ? (request.query as Record<string, unknown>)['access_token']
        : undefined;
    const credential = extractCredential(request.headers, ctx.settings.auth.cookie, queryToken);
    const decision = await ctx.auth.decide(api, credential);
    if (!decision.ok) {
      const headers: Record<string, string> | undefined =
        decision.code === 'UNAUTHORIZED' ? { 'www-authenticate': 'Bearer realm="sagaway"' } : undefined;
      return sendProblem(reply, problemFor(decision.code, request.id), headers);
    }
    request.sagaway = {
      form,
      api,
      sagaPath,
      principal: decision.principal,
      credential: credential === 'invalid' ? null : credential,
    };
    return undefined;
  };
}
