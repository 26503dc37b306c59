import type { Socket } from 'node:net';
import Fastify, { LogController, type FastifyInstance, type FastifyRequest } from 'fastify';
import type { Settings } from '../config/settings.js';
import type { TraceSource } from '../core/trace.js';
import { registerConsole } from './console/routes.js';
import type { Logger } from '../core/logger.js';
import type { SagaService, StatusSource } from '../core/messages.js';
import { ApiMap } from './apis/api-map.js';
import { Authenticator } from './auth/authenticator.js';
import type { GatewayContext } from './context.js';
import { FORM_PREFIX } from './apis/saga-path.js';
import { requestForm, streamForm } from './forms/plugins.js';
import { CursorCodec } from './stream/cursor.js';
import { handleClientError, handleError, handleFrameworkError } from './http/helpers/errors.js';
import { registerOps } from './http/routes/health.js';
import { JSON_MEDIA_TYPE, parseJsonBody, parseQuery } from './request/input.js';
import { GatewayMetrics, type RouteLabel } from './http/helpers/metrics.js';
import { problemFor, retryAfterOn503, sendProblem } from './http/helpers/problem.js';
import { RateLimiter } from './http/helpers/rate-limit.js';
import { correlationIdOf, requestIdFor } from './http/helpers/request-id.js';
import { openIdempotencyKeys } from './request/idempotency-key.js';
import { SagaRoutes } from './apis/saga-routes.js';
import { InputChecks } from './request/validate-input.js';
import { checkingOutputs } from './request/validate-output.js';
import { unmappedSagaPaths } from './apis/route-check.js';
import { registerStatic } from './http/routes/static.js';
import { lazySchemaCompilers } from './http/schema-compilers.js';
import { fastifyTrustProxy, trustProxyWarning } from './http/helpers/trust-proxy.js';
import { registerOpenApi } from './http/routes/openapi.js';
import { registerStatusRoute } from './http/routes/status.js';
import { StreamRegistry } from './stream/limits.js';
import { registerWaitRoutes } from './waits/routes.js'; // waits:
import { endSource } from './waits/prefer.js'; // waits:
import { withoutToken } from './waits/callback-page.js'; // waits:
import type { WaitService } from '../core/waits.js'; // waits:
import { tracing } from '../core/otel.js';
import { traceRequests } from './http/helpers/tracing.js';
import { requestLoggers } from './http/helpers/request-logger.js';
import type { RunAdmin } from '../core/runs.js';
import { registerRunRoutes } from './runs/routes.js';

/** Routes outside the two forms that the gateway's rate limit counts (the forms count their own). */
const LIMITED_ROUTES = ['/api/status/', '/api/runs', '/api/signals/', '/api/callbacks/'];

/** Options of createGateway. */
export interface GatewayOptions {
  settings: Settings;
  service: SagaService;
  log: Logger;
  /** readiness checks for /readyz (name -> reachable); absent = always ready */
  ready?: () => Promise<Record<string, boolean>>;
  /** also export Node's default process metrics; default false */
  defaultMetrics?: boolean;
  /** the saga journals, for GET /api/status/<requestId>; absent = every status is 404 */
  status?: StatusSource;
  /** where the console's live runs come from (the host's TraceBus, or runners' traces over NATS) */
  traces?: readonly TraceSource[];
  /** waits: signals, cancels and callbacks of parked runs (runner/waits/service.ts); absent = 404 */
  waits?: WaitService;
  /** runs: list, redrive, abort (runner/orchestrator/run-admin.ts); absent = no journal, 404 */
  runs?: RunAdmin;
}

/** Live counters, for tests and diagnostics. */
export interface GatewayStats {
  /** open SSE streams */
  streams: number;
  /** timers armed by stream loops */
  timers: number;
  /** saga runs in flight for streams */
  streamRuns: number;
}

/** A built gateway. */
export interface Gateway {
  /** the fastify instance (use `app.inject` in tests) */
  app: FastifyInstance;
  metrics: GatewayMetrics;
  /** listen on `port` (default settings.gateway.port, else 8080; 0 = any free port) */
  listen(port?: number, host?: string): Promise<{ port: number }>;
  stats(): GatewayStats;
  /** end every stream, then stop the server */
  close(): Promise<void>;
}

/** How often Node checks the header and body timeouts: a fraction of the shorter one, 50 ms to 5 s. */
function checkingInterval(limits: Settings['gateway']['limits']): number {
  return Math.min(5000, Math.max(50, Math.floor(Math.min(limits.headerTimeoutMs, limits.bodyTimeoutMs) / 4)));
}

function routeLabel(request: FastifyRequest): RouteLabel {
  const url = request.routeOptions.url;
  if (url === undefined) return 'none';
  if (url.startsWith(FORM_PREFIX.request)) return 'request';
  if (url.startsWith(FORM_PREFIX.stream)) return 'stream';
  if (url === '/*') return 'static';
  return 'ops';
}

/** Build the gateway (DESIGN §3, §5, §7, §8, §9) in front of `service`. */
export async function createGateway(options: GatewayOptions): Promise<Gateway> {
  const settings = options.settings.gateway;
  const limits = settings.limits;
  const app = Fastify({
    // request.log is made at its first use (request-logger.ts): most requests never log.
    loggerInstance: requestLoggers(options.log),
    // Fastify's own request lines include the URL with its query (access_token): we log our own.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: settings.limits.bodyLimit,
    // The listed proxies, or one hop for `true` (never fastify's own `true`: http/helpers/trust-proxy.ts).
    trustProxy: fastifyTrustProxy(settings.trustProxy),
    requestIdHeader: false,
    genReqId: requestIdFor,
    routerOptions: { querystringParser: parseQuery, maxParamLength: 2048 },
    // Slow clients (docs/gateway.md, Limits): the headers, then the whole request, must arrive in
    // time (Node answers 408 through clientErrorHandler); a connection silent for idleTimeout is
    // closed (SSE streams opt out: they have heartbeats and stallTimeout).
    http: {
      headersTimeout: limits.headerTimeoutMs,
      // Node would answer an HTTP/1.1 request without Host itself, with a bare 400 (no body, no
      // request id): the onRequest hook answers it as problem+json instead.
      requireHostHeader: false,
      requestTimeout: limits.bodyTimeoutMs,
      connectionsCheckingInterval: checkingInterval(limits),
    },
    requestTimeout: limits.bodyTimeoutMs,
    connectionTimeout: limits.idleTimeoutMs,
    // Between two requests of a keep-alive connection, Node uses this timer instead.
    keepAliveTimeout: limits.idleTimeoutMs,
    // fastify's own answers are plain JSON: these route them through our problem+json instead.
    frameworkErrors: handleFrameworkError,
    clientErrorHandler: handleClientError,
    return503OnClosing: false,
    // Ajv and fast-json-stringify, loaded only by a route with a schema (none today): issue 23.
    schemaController: { compilersFactory: lazySchemaCompilers },
  });
  // Over the cap Node closes new connections at once, unserved.
  app.server.maxConnections = limits.maxConnections;

  const metrics = new GatewayMetrics({ defaultMetrics: options.defaultMetrics ?? false });
  const ctx: GatewayContext = {
    settings,
    service: settings.validateResponses
      ? checkingOutputs(options.service, options.settings.runners ?? {}, app.log)
      : options.service,
    apis: new ApiMap(settings.apis, unmappedSagaPaths(options.settings)),
    auth: new Authenticator(settings.auth, app.log),
    cursors: new CursorCodec(settings.stream.cursorKey),
    metrics,
    streams: new StreamRegistry(settings.stream.maxPerClient, settings.stream.maxStreams),
    log: app.log,
  };

  const rate = await RateLimiter.create(limits, settings.apis, app.log);
  const keys = await openIdempotencyKeys(options.settings, options.log, options.status);
  // Embedding programs and tests may hand over settings with a gateway block only.
  const sagas = new SagaRoutes(options.settings.runners ?? {});
  const inputs = new InputChecks(options.settings.runners ?? {});
  let closing: Promise<void> | undefined;

  app.decorateRequest('sagaway', null);
  app.decorateRequest('apiLabel', '');
  app.decorateRequest('streamed', false);

  // OpenTelemetry server spans: hooks only when tracing is on (first, so a span covers the request's checks).
  if (tracing.current !== undefined) traceRequests(app, tracing.current);
  // Access lines are built only when they will be written (the level is read once, at start).
  const logRequests = options.log.isLevelEnabled('info');
  // Callback-style hooks: async ones cost a promise and a microtask hop on every request.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    reply.header('x-content-type-options', 'nosniff');
    // fastify's own 503 while closing is not problem+json (return503OnClosing is off): ours is.
    if (closing !== undefined) {
      sendProblem(reply, problemFor('SERVICE_UNAVAILABLE', request.id, 'the gateway is shutting down'));
      return;
    }
    // HTTP/1.1 requires Host (RFC 9112 §3.2); HTTP/1.0 has none.
    if (request.headers.host === undefined && request.raw.httpVersionMinor === 1) {
      sendProblem(reply, problemFor('BAD_REQUEST', request.id, 'the request has no Host header'));
      return;
    }
    // The client's own X-Request-Id is a correlation id only (request-id.ts): echoed, never the run id.
    const correlationId = correlationIdOf(request.headers);
    if (correlationId !== undefined) reply.header('x-correlation-id', correlationId);
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    if (!request.streamed)
      metrics.observeRequest(routeLabel(request), request.apiLabel, reply.statusCode, reply.elapsedTime / 1000);
    if (logRequests) {
      const q = request.url.indexOf('?');
      // The query is never logged: it may hold access_token. Written by the parent logger with the
      // request id first, the line request.log would write, without making the request's child.
      options.log.info(
        {
          reqId: request.id,
          method: request.method,
          path: withoutToken(q < 0 ? request.url : request.url.slice(0, q)), // waits: a callback token is a capability
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime),
          correlationId: correlationIdOf(request.headers),
        },
        'request',
      );
    }
    done();
  });

  app.addHook('onSend', retryAfterOn503);

  app.removeAllContentTypeParsers();
  // As bytes: parseJsonBody decodes them strictly (invalid UTF-8 is INVALID_JSON, not U+FFFD).
  const parseJson = (
    _req: unknown,
    body: string | Buffer,
    done: (err: Error | null, value?: unknown) => void,
  ): void => {
    try {
      done(null, parseJsonBody(body, settings.limits.maxValues));
    } catch (err) {
      done(err as Error, undefined);
    }
  };
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, parseJson);
  app.addContentTypeParser(JSON_MEDIA_TYPE, { parseAs: 'buffer' }, parseJson);

  app.setErrorHandler(handleError);
  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, problemFor('NOT_FOUND', request.id, 'no route serves this path')),
  );

  // The status and run routes are counted by the gateway's rate limit too (journal reads),
  // and so are the wait routes (waits: a signal, cancel or callback is a store write or a token
  // check; the callback page's GET too). They authenticate in their handlers, so they are counted
  // by source address, like a refused credential.
  if (rate.active) {
    app.addHook('onRoute', (route) => {
      if (!LIMITED_ROUTES.some((prefix) => route.url.startsWith(prefix))) return;
      const own = route.onRequest;
      route.onRequest = own === undefined ? [rate.hook] : [...(Array.isArray(own) ? own : [own]), rate.hook];
    });
  }
  // Encapsulated: a form's routes take the hooks, parsers and error handler set above.
  const checks = inputs.active ? inputs : undefined;
  await app.register(requestForm, { ctx, rate, keys, checks, ends: endSource(options, ctx.streams) }); // waits: ends
  await app.register(streamForm, { ctx, rate, sagas, checks });
  registerOps(app, metrics, options.ready);
  registerStatusRoute(app, ctx, options.status);
  registerWaitRoutes(app, ctx, options.waits); // waits:
  // their guard counts a refused credential (rate.onRefused), as the API forms do
  registerRunRoutes(app, ctx, options.runs, options.waits, rate.onRefused);
  if (settings.openapi) registerOpenApi(app, options.settings);
  if (settings.static !== undefined) await registerStatic(app, settings.static);
  const shown = settings.console;
  const consoleFeed = shown.enabled
    ? registerConsole(app, ctx, {
        settings: options.settings,
        console: shown,
        traces: options.traces ?? [],
        ...(options.status ? { status: options.status } : {}),
        ...(options.runs ? { runs: options.runs } : {}),
        ...(rate.onRefused ? { onUnauthorized: rate.onRefused } : {}),
      })
    : undefined;

  // Sockets, so that closing can drop connections that never sent a request: Node counts them as
  // busy, and one of them (a client's spare pooled connection) would hold the close until its
  // headers timeout.
  const sockets = new Set<Socket>();
  app.server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  return {
    app,
    metrics,
    async listen(port?: number, host?: string): Promise<{ port: number }> {
      const listenHost = host ?? settings.host;
      const warning = trustProxyWarning(settings.trustProxy, listenHost);
      if (warning !== undefined) app.log.warn({ host: listenHost }, warning);
      await app.listen({ port: port ?? settings.port ?? 8080, host: listenHost });
      const address = app.server.address();
      return { port: typeof address === 'object' && address !== null ? address.port : (port ?? 0) };
    },
    stats: () => ({ streams: ctx.streams.size, timers: metrics.streamTimers, streamRuns: metrics.streamRuns }),
    close(): Promise<void> {
      closing ??= (async () => {
        ctx.streams.stopAll();
        consoleFeed?.close();
        const done = app.close();
        for (const socket of sockets) if (socket.bytesRead === 0) socket.destroy();
        // In-flight one-shot requests get at most their own timeout; then everything is cut.
        const force = setTimeout(() => app.server.closeAllConnections(), settings.limits.timeoutMs + 1000);
        force.unref();
        try {
          await done;
        } finally {
          clearTimeout(force);
          await rate.close();
          await keys.close().catch((err: unknown) => app.log.warn({ err }, 'closing the idempotency key store failed'));
        }
      })();
      return closing;
    },
  };
}
