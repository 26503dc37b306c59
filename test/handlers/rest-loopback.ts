import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HttpSystemSettings } from '../../src/config/settings.js';

/**
 * A real HTTP server on a loopback address and port 0 for the rest handler tests. It counts
 * TCP connections, so a test can prove that a refused call never opened a socket to it.
 * Only ever listens on 127.0.0.1 or ::1.
 */

/** One request the server received. */
export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A running loopback server. */
export interface LoopbackServer {
  /** `http://127.0.0.1:PORT` or `http://[::1]:PORT` */
  origin: string;
  port: number;
  /** TCP connections accepted so far */
  connections: number;
  requests: SeenRequest[];
  close(): Promise<void>;
}

/** Route handler: answer or leave the response open (timeouts). */
export type Route = (req: SeenRequest, res: ServerResponse) => void;

/** Routes most tests use: /json, /text, /status/N, /slow, /stall-body, /big, /big-cl, /redirect?to=, /loop, /echo. */
export const defaultRoutes: Route = (req, res) => {
  const url = new URL(req.url, 'http://loopback');
  const send = (status: number, type: string, body: string, extra: Record<string, string> = {}): void => {
    res.writeHead(status, { 'content-type': type, ...extra }).end(body);
  };
  if (url.pathname.endsWith('/json'))
    return send(200, 'application/json; charset=utf-8', JSON.stringify({ ok: true, n: 42 }));
  if (url.pathname.endsWith('/problem-json')) return send(200, 'application/problem+json', '{"a":[1,2]}');
  if (url.pathname.endsWith('/bad-json')) return send(200, 'application/json', '{not json');
  if (url.pathname.endsWith('/text')) return send(200, 'text/plain; charset=utf-8', 'hello, world');
  if (url.pathname.endsWith('/empty')) return void res.writeHead(204).end();
  const status = /\/status\/(\d{3})$/.exec(url.pathname);
  if (status) return send(Number(status[1]), 'application/json', JSON.stringify({ error: 'upstream detail 10.1.2.3' }));
  if (url.pathname.endsWith('/slow')) return; // never answers: the client's timeout must fire
  if (url.pathname.endsWith('/stall-body')) {
    // headers and a first chunk, then nothing: the timeout must also cover reading the body
    res.writeHead(200, { 'content-type': 'application/json' });
    return void res.write('{"partial":');
  }
  if (url.pathname.endsWith('/big')) {
    // chunked, no content-length: the cap must apply while reading
    res.writeHead(200, { 'content-type': 'text/plain' });
    const chunk = 'x'.repeat(16 * 1024);
    let sent = 0;
    const pump = (): void => {
      while (sent < 256 && res.write(chunk)) sent++;
      if (sent >= 256) res.end();
      else res.once('drain', pump);
    };
    res.on('error', () => undefined);
    return pump();
  }
  if (url.pathname.endsWith('/big-cl')) return send(200, 'text/plain', 'y'.repeat(4096));
  if (url.pathname.endsWith('/redirect')) {
    return send(Number(url.searchParams.get('status') ?? 302), 'text/plain', 'moved', {
      location: url.searchParams.get('to') ?? '/json',
    });
  }
  if (url.pathname.endsWith('/loop')) return send(302, 'text/plain', 'again', { location: req.url });
  // /echo and anything else: what the server saw
  return send(
    200,
    'application/json',
    JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body: req.body }),
  );
};

/** Start a server on `host` (127.0.0.1 or ::1), port 0. */
export async function startLoopback(
  route: Route = defaultRoutes,
  host: '127.0.0.1' | '::1' = '127.0.0.1',
): Promise<LoopbackServer> {
  const requests: SeenRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const seen = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(seen);
      route(seen, res);
    });
  });
  const state = { connections: 0 };
  server.on('connection', () => state.connections++);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    origin: host === '::1' ? `http://[::1]:${port}` : `http://127.0.0.1:${port}`,
    port,
    get connections() {
      return state.connections;
    },
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An `http` system as the config compiler would produce it (defaults filled). */
export function httpSystem(name: string, baseUrl: string, over: Partial<HttpSystemSettings> = {}): HttpSystemSettings {
  return {
    type: 'http',
    name,
    baseUrl,
    timeoutMs: 2_000,
    maxResponseSize: 1024 * 1024,
    headers: {},
    allowPrivate: false,
    followRedirects: false,
    ...over,
  };
}
