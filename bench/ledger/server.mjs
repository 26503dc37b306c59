#!/usr/bin/env node
// One server of the cost ledger (bench/ledger/run.mjs): a fastify app with some of the gateway's
// parts, assembled from sagaway's own modules (dist/) the way src/gateway/server.ts and
// src/gateway/forms/plugins.ts assemble them, so that each part's cost can be measured alone.
// Every variant answers GET /api/request/items/:id with the same item (bench/lib/items.cjs).
//   PORT=N PARTS=options,reqid,admit,saga node bench/ledger/server.mjs
//   PORT=N PARTS=gateway node bench/ledger/server.mjs          (createGateway itself, as `sagaway start`)
// PARTS (each needs the ones before it in this list, except rate, which stands alone after admit):
//   options  the gateway's fastify options (silent pino, query parser, timeouts, framework errors)
//   reqid    request ids (genReqId) and the onRequest hook (x-request-id, nosniff, Host, correlation id)
//   admit    the API map and the auth decision (admit.ts) and the JSON body-type check
//   rate     the per-client rate limit, at a limit no load reaches
//   saga     the saga run: a SagaRequest to the Host's runner (one local event step), output as JSON
//   render   the real one-shot handler: negotiation and rendering (request/route.ts)
//   keys     the Idempotency-Key store's hooks (requests carry no key)
//   metrics  the onResponse metrics hook
//   log      the access log line at info, to /dev/null
//   gateway  createGateway, as `sagaway start` builds it (parts above ignored); RATE=1 turns the
//            rate limit on, at a limit no load reaches
import { join } from 'node:path';
import Fastify, { LogController } from 'fastify';
import { pino } from 'pino';
import { items } from '../lib/items.cjs';
import { ROOT } from '../lib/servers.mjs';

const dist = (path) => import(join(ROOT, 'dist', 'src', path));
const parts = new Set((process.env.PARTS ?? '').split(',').filter(Boolean));
const has = (part) => parts.has(part);

const { loadConfig } = await dist('config/load.js');
const { settings: loaded } = await loadConfig(join(ROOT, 'bench', 'ledger', 'sagaway.yaml'));
const rateOn = has('rate') || process.env.RATE === '1';
// The rate limit's row: the same file with a per-client limit no load reaches.
const settings = rateOn
  ? {
      ...loaded,
      gateway: { ...loaded.gateway, limits: { ...loaded.gateway.limits, rate: { max: 1e9, windowMs: 60_000 } } },
    }
  : loaded;
const gw = settings.gateway;
const log = has('log')
  ? pino({ level: 'info' }, pino.destination({ dest: '/dev/null', sync: false }))
  : pino({ level: 'silent' });

/** The Host of `sagaway start`, for the rows that run the saga. */
async function startHost() {
  const { Host } = await dist('runner/host.js');
  const { BUILTIN_HANDLERS } = await dist('handlers/index.js');
  const { createState } = await dist('states/index.js');
  const { createCluster } = await dist('systems/index.js');
  return Host.start({ settings, log, builtins: BUILTIN_HANDLERS, createState, createCluster });
}

let app;
// TRACING=<OTLP base URL>: tracing on, every request sampled, spans exported to that sink (docs/tracing.md)
if (process.env.TRACING) {
  const { startTracing } = await dist('systems/otel/sdk.js');
  const { resolveTracing } = await dist('systems/otel/config.js');
  const { installTracing } = await dist('core/otel.js');
  installTracing(
    await startTracing(resolveTracing({ enabled: true, endpoint: process.env.TRACING, sampleRatio: 1 }, {})),
  );
}
if (has('gateway')) {
  const { createGateway } = await dist('gateway/server.js');
  const host = await startHost();
  const gateway = await createGateway({
    settings,
    service: host,
    log,
    ready: () => host.ready(),
    status: host.statusReader(),
    traces: [host.traces],
  });
  app = gateway.app;
} else {
  app = await assemble();
}
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
for (const s of ['SIGINT', 'SIGTERM']) process.once(s, () => app.close().then(() => process.exit(0)));

/** fastify plus the parts named in PARTS, in the gateway's order. */
async function assemble() {
  const { requestIdFor, correlationIdOf } = await dist('gateway/http/helpers/request-id.js');
  const { parseQuery } = await dist('gateway/request/input.js');
  const { handleClientError, handleFrameworkError } = await dist('gateway/http/helpers/errors.js');
  const limits = gw.limits;
  const { requestLoggers } = await dist('gateway/http/helpers/request-logger.js');
  const app = has('options')
    ? Fastify({
        // request.log made at its first use, as src/gateway/server.ts
        loggerInstance: requestLoggers(log),
        logController: new LogController({ disableRequestLogging: true }),
        bodyLimit: limits.bodyLimit,
        requestIdHeader: false,
        ...(has('reqid') ? { genReqId: requestIdFor } : {}),
        routerOptions: { querystringParser: parseQuery, maxParamLength: 2048 },
        http: {
          headersTimeout: limits.headerTimeoutMs,
          requireHostHeader: false,
          requestTimeout: limits.bodyTimeoutMs,
          connectionsCheckingInterval: 1000,
        },
        requestTimeout: limits.bodyTimeoutMs,
        connectionTimeout: limits.idleTimeoutMs,
        keepAliveTimeout: limits.idleTimeoutMs,
        frameworkErrors: handleFrameworkError,
        clientErrorHandler: handleClientError,
        return503OnClosing: false,
      })
    : Fastify({ logger: false });
  if (!has('admit')) {
    // the bare route: as bench/peers/fastify-bare.mjs, under the gateway's path
    app.get('/api/request/items/:id', (request, reply) => {
      if (has('reqid')) reply.header('x-request-id', request.id);
      const item = items.get(request.params.id);
      if (!item) return reply.code(404).send({ code: 'RECORD_NOT_FOUND' });
      return reply.send(item);
    });
    if (has('reqid')) app.addHook('onRequest', requestIdHook(correlationIdOf));
    return app;
  }
  const { ApiMap } = await dist('gateway/apis/api-map.js');
  const { unmappedSagaPaths } = await dist('gateway/apis/route-check.js');
  const { Authenticator } = await dist('gateway/auth/authenticator.js');
  const { CursorCodec } = await dist('gateway/stream/cursor.js');
  const { StreamRegistry } = await dist('gateway/stream/limits.js');
  const { GatewayMetrics } = await dist('gateway/http/helpers/metrics.js');
  const { admitter } = await dist('gateway/forms/admit.js');
  const { ROUTED_METHODS } = await dist('gateway/apis/api-map.js');
  const { isJsonContentType, usesBody } = await dist('gateway/request/input.js');
  const { problemFor, sendProblem } = await dist('gateway/http/helpers/problem.js');
  const metrics = new GatewayMetrics({ defaultMetrics: false });
  const host = has('saga') ? await startHost() : undefined;
  const ctx = {
    settings: gw,
    service: host,
    apis: new ApiMap(gw.apis, unmappedSagaPaths(settings)),
    auth: new Authenticator(gw.auth, app.log),
    cursors: new CursorCodec(gw.stream.cursorKey),
    metrics,
    streams: new StreamRegistry(gw.stream.maxPerClient, gw.stream.maxStreams),
    log: app.log,
  };
  app.decorateRequest('sagaway', null);
  app.decorateRequest('apiLabel', '');
  app.decorateRequest('streamed', false);
  if (has('reqid')) app.addHook('onRequest', requestIdHook(correlationIdOf));
  if (has('metrics') || has('log')) app.addHook('onResponse', onResponseHook(metrics, correlationIdOf));

  let rate;
  if (has('rate')) {
    const { RateLimiter } = await dist('gateway/http/helpers/rate-limit.js');
    rate = await RateLimiter.create(limits, gw.apis, app.log);
  }
  const requireJson = (request, reply, done) => {
    if (usesBody(request.method) && !isJsonContentType(request.headers['content-type'])) {
      sendProblem(reply, problemFor('UNSUPPORTED_MEDIA_TYPE', request.id, 'the body must be sent as application/json'));
      return;
    }
    done();
  };
  // one onRequest hook, the later checks its continuation (src/gateway/forms/plugins.ts)
  const onRequest = admitter(
    ctx,
    'request',
    rate ? (req, rep, api, send) => rate.refused(req, rep, api, send) : undefined,
    rate ? rate.followedBy(requireJson) : requireJson,
  );
  let keys;
  if (has('keys')) {
    const { openIdempotencyKeys } = await dist('gateway/request/idempotency-key.js');
    keys = await openIdempotencyKeys(settings, log, host.statusReader());
  }
  let handler;
  if (has('render')) {
    const { requestHandler } = await dist('gateway/request/route.js');
    handler = requestHandler(ctx, keys);
  } else if (has('saga')) handler = await sagaOnly(ctx);
  else {
    handler = (request, reply) => {
      const segments = request.sagaway.sagaPath.segments;
      return reply.send(items.get(segments[segments.length - 1]));
    };
  }
  app.register((scope, _opts, done) => {
    for (const url of ['/api/request', '/api/request/*'])
      scope.route({
        method: [...ROUTED_METHODS],
        url,
        exposeHeadRoute: false,
        onRequest,
        handler,
        ...(keys ? { onSend: keys.onSend } : {}),
      });
    done();
  });
  return app;
}

/** The gateway's onRequest hook (src/gateway/server.ts) without the closing check. */
function requestIdHook(correlationIdOf) {
  return (request, reply, done) => {
    reply.header('x-request-id', request.id);
    reply.header('x-content-type-options', 'nosniff');
    if (request.headers.host === undefined && request.raw.httpVersionMinor === 1) {
      reply.code(400).send();
      return;
    }
    const correlationId = correlationIdOf(request.headers);
    if (correlationId !== undefined) reply.header('x-correlation-id', correlationId);
    done();
  };
}

/** The gateway's onResponse hook: metrics (PARTS metrics) and the access line (PARTS log). */
function onResponseHook(metrics, correlationIdOf) {
  const logRequests = has('log');
  const observe = has('metrics');
  return (request, reply, done) => {
    if (observe && !request.streamed)
      metrics.observeRequest('request', request.apiLabel, reply.statusCode, reply.elapsedTime / 1000);
    if (logRequests) {
      const q = request.url.indexOf('?');
      log.info(
        {
          reqId: request.id,
          method: request.method,
          path: q < 0 ? request.url : request.url.slice(0, q),
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime),
          correlationId: correlationIdOf(request.headers),
        },
        'request',
      );
    }
    done();
  };
}

/** The one-shot handler up to the run (request/route.ts) with the output sent as plain JSON. */
async function sagaOnly(ctx) {
  const { Cancel } = await dist('core/cancel.js');
  const { callerKey } = await dist('core/caller.js');
  const { correlationIdOf } = await dist('gateway/http/helpers/request-id.js');
  return async (request, reply) => {
    const admitted = request.sagaway;
    const cancel = new Cancel();
    const res = reply.raw;
    res.once('close', () => {
      if (!res.writableFinished) cancel.abort();
    });
    const result = await ctx.service.run(admitted.api.settings.runner, {
      method: request.method,
      path: admitted.sagaPath.path,
      input: request.query,
      query: request.query,
      requestId: request.id,
      runId: request.id,
      user: admitted.principal,
      caller: callerKey(admitted.principal, request.ip),
      correlationId: correlationIdOf(request.headers),
      deadline: Date.now() + ctx.settings.limits.timeoutMs,
      cancel,
      get signal() {
        return cancel.signal;
      },
    });
    return reply.code(result.http).send(result.response);
  };
}
