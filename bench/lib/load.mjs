// HTTP load from a separate process: autocannon's own CLI, JSON output.
import { createRequire } from 'node:module';
import { runNodeJson } from './proc.mjs';

const require = createRequire(import.meta.url);
const AUTOCANNON = require.resolve('autocannon/autocannon.js');

/**
 * Drives `url` for `seconds` with `connections` keep-alive connections (no pipelining) and
 * returns { rps, p50, p99, errors, non2xx }. A run with errors or non-2xx answers throws: a
 * figure from a server that fails requests is not a figure.
 */
export async function httpLoad(url, { connections, seconds, method = 'GET', body, headers = {} }) {
  const args = ['-j', '-c', String(connections), '-d', String(seconds), '-m', method];
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}=${v}`);
  if (body !== undefined) args.push('-b', body, '-H', 'content-type=application/json');
  args.push(url);
  const r = await runNodeJson(AUTOCANNON, args, { timeoutMs: (seconds + 30) * 1000 });
  const result = {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors + r.timeouts,
    non2xx: r.non2xx,
    total: r.requests.total,
  };
  if (result.errors || result.non2xx || !result.total) {
    throw new Error(`${url}: ${result.total} requests, ${result.errors} errors, ${result.non2xx} non-2xx`);
  }
  return result;
}
