import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { extname, resolve, sep } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { problemFor, sendProblem } from '../helpers/problem.js';

/**
 * A small static file handler for `gateway.static` (GET and HEAD at `/`). Paths are decoded once,
 * dot segments and NUL are refused, and the resolved real path (symlinks followed) must stay
 * inside the folder, so nothing outside it can be read. Directories serve their index.html.
 */

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
};

/** Resolve a URL path inside `root` (a real path); undefined when it would leave it. */
export function resolveInside(root: string, urlPath: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return undefined;
  }
  if (decoded.includes('\0') || decoded.includes('\\')) return undefined;
  const parts = decoded.split('/').filter((p) => p !== '');
  if (parts.some((p) => p === '.' || p === '..')) return undefined;
  const full = resolve(root, ...parts);
  return full === root || full.startsWith(root + sep) ? full : undefined;
}

/** Serve `folder` at `/`. */
export async function registerStatic(app: FastifyInstance, folder: string): Promise<void> {
  const root = await realpath(folder);
  app.route({
    method: ['GET', 'HEAD'],
    url: '/*',
    exposeHeadRoute: false,
    handler: async (request, reply) => {
      const q = request.url.indexOf('?');
      const urlPath = q < 0 ? request.url : request.url.slice(0, q);
      const notFound = () => sendProblem(reply, problemFor('NOT_FOUND', request.id, 'no such file'));
      let file = resolveInside(root, urlPath);
      if (!file) return notFound();
      try {
        let info = await stat(file);
        if (info.isDirectory()) {
          file = resolve(file, 'index.html');
          info = await stat(file);
        }
        const real = await realpath(file);
        if (!info.isFile() || !(real === root || real.startsWith(root + sep))) return notFound();
        reply.header('content-length', info.size);
        reply.type(TYPES[extname(real).toLowerCase()] ?? 'application/octet-stream');
        if (request.method === 'HEAD') return reply.send();
        return reply.send(createReadStream(real));
      } catch {
        return notFound();
      }
    },
  });
}
