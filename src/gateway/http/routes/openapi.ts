import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Settings } from '../../../config/settings.js';
import { openApiDocument } from '../../apis/openapi-document.js';

/** The path of the OpenAPI document. */
export const OPENAPI_PATH = '/api/openapi.json';

/**
 * `GET /api/openapi.json` (docs/gateway.md, OpenAPI): the document is built and serialised once,
 * on its first request, and served as is with an ETag; a request costs no work beyond that.
 * Like /healthz, anyone who reaches the gateway may read it: it lists what the API routes
 * would tell a caller anyway (paths, methods, which auth), never a credential.
 * `gateway.openapi: false` turns it off (then it is 404 like any unknown path).
 */
export function registerOpenApi(app: FastifyInstance, settings: Settings): void {
  // Built on the first request: by then the port is the one listened on (--port, PORT, 0).
  let built: { text: string; etag: string } | undefined;
  const build = () => {
    const address = app.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : undefined;
    const text = JSON.stringify(openApiDocument(settings, port));
    return { text, etag: `"${createHash('sha256').update(text).digest('base64url').slice(0, 22)}"` };
  };
  app.get(OPENAPI_PATH, (request, reply) => {
    const { text, etag } = (built ??= build());
    reply.header('etag', etag).header('cache-control', 'no-cache');
    if (request.headers['if-none-match'] === etag) return reply.code(304).send();
    return reply.type('application/json; charset=utf-8').send(text);
  });
}
