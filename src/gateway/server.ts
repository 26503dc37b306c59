import type { Socket } from 'node:net';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify';
import type { Settings } from '../config/settings.js';
import type { Logger } from '../core/logger.js';
import type { SagaService } from '../systems/system.js';
import { ApiMap, ROUTED_METHODS } from './api-map.js';
import { Authenticator } from './auth.js';
import { admitter, FORM_PREFIX, type GatewayContext } from './context.js';
import { CursorCodec } from './cursor.js';
import { handleError } from './errors.js';
import { registerOps } from './health.js';
import { parseJsonBody, parseQuery } from './input.js';
import { GatewayMetrics, type RouteLabel } from './metrics.js';
import { problemFor, sendProblem } from './problem.js';
import { requestIdFor } from './request-id.js';
import { requestHandler } from './request-route.js';
import { registerStatic } from './static.js';
import { registerStatusRoute, type StatusSource } from './status-route.js';
import { StreamRegistry } from './stream-limits.js';
import { streamHandler } from './stream-route.js';

export { gatewaySettingsForTest, type GatewaySettingsInput } from './test-settings.js';

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

const JSON_TYPES = /^application\/(?:[\w.-]+\+)?json$/;

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
  const app = Fastify({
    loggerInstance: options.log as unknown as FastifyBaseLogger,
    // Fastify's own request lines include the URL with its query (access_token): we log our own.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: settings.limits.bodyLimit,
    trustProxy: settings.trustProxy,
    requestIdHeader: false,
    genReqId: requestIdFor,
    routerOptions: { querystringParser: parseQuery, maxParamLength: 2048 },
  });

  const metrics = new GatewayMetrics({ defaultMetrics: options.defaultMetrics ?? false });
  const ctx: GatewayContext = {
    settings,
    service: options.service,
    apis: new ApiMap(settings.apis),
    auth: new Authenticator(settings.auth, app.log),
    cursors: new CursorCodec(settings.stream.cursorKey),
    metrics,
    streams: new StreamRegistry(settings.stream.maxPerClient, settings.stream.maxStreams),
    log: app.log,
  };

  app.decorateRequest('sagaway', null);
  app.decorateRequest('apiLabel', '');
  app.decorateRequest('streamed', false);

  // Access lines are built only when they will be written (the level is read once, at start).
  const logRequests = options.log.isLevelEnabled('info');
  // Callback-style hooks: async ones cost a promise and a microtask hop on every request.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    reply.header('x-content-type-options', 'nosniff');
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    if (!request.streamed)
      metrics.observeRequest(routeLabel(request), request.apiLabel, reply.statusCode, reply.elapsedTime / 1000);
    if (logRequests) {
      const q = request.url.indexOf('?');
      // The query is never logged: it may hold access_token.
      request.log.info(
        {
          method: request.method,
          path: q < 0 ? request.url : request.url.slice(0, q),
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime),
        },
        'request',
      );
    }
    done();
  });

  app.removeAllContentTypeParsers();
  const parseJson = (
    _req: unknown,
    body: string | Buffer,
    done: (err: Error | null, value?: unknown) => void,
  ): void => {
    try {
      done(null, parseJsonBody(typeof body === 'string' ? body : body.toString('utf8')));
    } catch (err) {
      done(err as Error, undefined);
    }
  };
  app.addContentTypeParser('application/json', { parseAs: 'string' }, parseJson);
  app.addContentTypeParser(JSON_TYPES, { parseAs: 'string' }, parseJson);

  app.setErrorHandler(handleError);
  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, problemFor('NOT_FOUND', request.id, 'no route serves this path')),
  );

  for (const form of ['request', 'stream'] as const) {
    const handler = form === 'request' ? requestHandler(ctx) : streamHandler(ctx);
    const onRequest = admitter(ctx, form);
    for (const url of [FORM_PREFIX[form], FORM_PREFIX[form] + '/*']) {
      app.route({ method: [...ROUTED_METHODS], url, exposeHeadRoute: false, onRequest, handler });
    }
  }
  registerOps(app, metrics, options.ready);
  registerStatusRoute(app, ctx, options.status);
  if (settings.static !== undefined) await registerStatic(app, settings.static);

  // Sockets, so that closing can drop connections that never sent a request: Node counts them as
  // busy, and one of them (a client's spare pooled connection) would hold the close until its
  // headers timeout.
  const sockets = new Set<Socket>();
  app.server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  let closing: Promise<void> | undefined;
  return {
    app,
    metrics,
    async listen(port?: number, host?: string): Promise<{ port: number }> {
      await app.listen({ port: port ?? settings.port ?? 8080, host: host ?? settings.host });
      const address = app.server.address();
      return { port: typeof address === 'object' && address !== null ? address.port : (port ?? 0) };
    },
    stats: () => ({ streams: ctx.streams.size, timers: ctx.streams.timers, streamRuns: ctx.streams.runs }),
    close(): Promise<void> {
      closing ??= (async () => {
        ctx.streams.stopAll();
        const done = app.close();
        for (const socket of sockets) if (socket.bytesRead === 0) socket.destroy();
        // In-flight one-shot requests get at most their own timeout; then everything is cut.
        const force = setTimeout(() => app.server.closeAllConnections(), settings.limits.timeoutMs + 1000);
        force.unref();
        try {
          await done;
        } finally {
          clearTimeout(force);
        }
      })();
      return closing;
    },
  };
}
