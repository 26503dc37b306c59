import type { FastifyInstance } from 'fastify';
import type { RequestSpan, Tracing } from '../../../core/otel.js';
import { withoutToken } from '../../waits/callback-page.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** the request's server span while tracing is on (docs/tracing.md); never set otherwise */
    otel?: RequestSpan | undefined;
  }
}

/**
 * One OpenTelemetry server span per request (HTTP semantic conventions), child of the caller's
 * `traceparent` when it sent a valid one. Installed only when tracing is on: a gateway without
 * tracing has no hook at all, so its requests pay nothing. The path is the access log's (no
 * query, a callback token masked); no header value but `user-agent` is read.
 */
export function traceRequests(app: FastifyInstance, tracer: Tracing): void {
  app.decorateRequest('otel', undefined);
  app.addHook('onRequest', (request, _reply, done) => {
    const q = request.url.indexOf('?');
    request.otel = tracer.request({
      method: request.method,
      path: withoutToken(q < 0 ? request.url : request.url.slice(0, q)),
      headers: request.headers,
      scheme: request.protocol,
      httpVersion: request.raw.httpVersion,
      requestId: request.id,
    });
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    request.otel?.end(reply.statusCode, request.routeOptions.url);
    done();
  });
}
