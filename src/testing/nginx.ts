import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * An nginx cache in front of a gateway, for the long-poll tests and bench (issue 25): Debian's
 * nginx (`.ci/run` installs it), started without root and without touching /etc or /var, on a
 * free port of 127.0.0.1, with its own prefix, configuration, cache and logs in a temporary
 * folder. Its `location /api/stream/` is the configuration docs/streams.md recommends.
 */

/** Where Debian's package puts nginx. */
export const NGINX = '/usr/sbin/nginx';

/** Whether nginx is installed. */
export function hasNginx(): boolean {
  return existsSync(NGINX);
}

/** The `location` block that caches and collapses long-poll requests (docs/streams.md#through-a-cache). */
export function longPollLocation(upstream: string, keySuffix = '', forwardedFor = '$remote_addr', minUses = 0): string {
  return `
    location /api/stream/ {
      proxy_pass http://${upstream};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header X-Forwarded-For ${forwardedFor};
      proxy_buffering on;
      proxy_cache feeds;
      proxy_cache_key $scheme$host$request_uri${keySuffix};
      # one request per URL goes to the gateway; the others wait for its answer in the cache
      proxy_cache_lock on;
      # 0, not the default 1: nginx counts the requests for a key not cached yet in a 10-bit field
      # that wraps to 0 every 1,024 requests, and at 0 < min_uses a request passes the lock to
      # the gateway (uncached); with 0 no count is below it (docs/streams.md, "Past 1,023 waiting
      # clients per URL")
      proxy_cache_min_uses ${minUses};
      # longer than the longest hold (gateway.stream.longPoll.hold), or waiters go to the gateway
      proxy_cache_lock_timeout 60s;
      proxy_cache_lock_age 60s;
      proxy_cache_use_stale updating;
      proxy_cache_background_update on;
      proxy_read_timeout 90s;
      add_header X-Cache $upstream_cache_status always;
    }`;
}

/** An nginx process and its port. */
export interface Nginx {
  port: number;
  dir: string;
  /** the error log so far (for a failing test's message) */
  errors(): Promise<string>;
  stop(): Promise<void>;
}

/** A free TCP port of 127.0.0.1 (the OS's choice, released for nginx to take). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

function reachable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1', () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });
}

/** Start nginx caching `upstreamPort`'s `/api/stream/` (everything else is passed through). */
export async function startNginx(
  upstreamPort: number,
  opts: {
    connections?: number;
    upstreamLog?: boolean;
    /**
     * Two tiers in one nginx (docs/streams.md#two-tiers-a-shield): clients' requests are cached
     * in 100 shards (by the last two digits of the client's port), whose misses go to a shield
     * tier that caches on the URL alone and is the only one to reach the gateway.
     */
    shield?: boolean;
    /** proxy_cache_min_uses (default 0, see longPollLocation; 1 is nginx's default, for comparison) */
    minUses?: number;
  } = {},
): Promise<Nginx> {
  const dir = await mkdtemp(join(tmpdir(), 'sagaway-nginx-'));
  const port = await freePort();
  const shieldPort = opts.shield ? await freePort() : undefined;
  const connections = opts.connections ?? 4096;
  const minUses = opts.minUses ?? 0;
  const conf = `
${process.getuid?.() === 0 ? 'user root root;' : ''}
worker_processes 1;
worker_rlimit_nofile ${Math.min(connections + 4096, 20_000)};
error_log ${dir}/error.log warn;
events { worker_connections ${connections + 2048}; }
http {
  ${
    opts.upstreamLog
      ? `log_format upstream '$msec $request_uri $upstream_cache_status $status $upstream_response_time $upstream_addr';
  access_log ${dir}/upstream.log upstream if=$upstream_addr;`
      : 'access_log off;'
  }
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  keepalive_requests 100000;
  proxy_cache_path ${dir}/cache levels=1:2 keys_zone=feeds:10m max_size=256m inactive=60s use_temp_path=off;
  upstream gateway { server 127.0.0.1:${upstreamPort}; keepalive 64; }${
    shieldPort === undefined
      ? ''
      : `
  map $remote_port $lp_shard { "~(?<lp_digits>[0-9]{1,2})$" $lp_digits; }
  upstream shield { server 127.0.0.1:${shieldPort}; keepalive 256; }
  server {
    listen 127.0.0.1:${shieldPort};
    ${longPollLocation('gateway', '', '$http_x_forwarded_for', minUses)}
    location / { proxy_pass http://gateway; }
  }`
  }
  server {
    listen 127.0.0.1:${port};
    ${shieldPort === undefined ? longPollLocation('gateway', '', '$remote_addr', minUses) : longPollLocation('shield', '|$lp_shard', '$remote_addr', minUses)}
    location / { proxy_pass http://gateway; }
  }
}
`;
  await writeFile(join(dir, 'nginx.conf'), conf);
  const child: ChildProcess = spawn(
    NGINX,
    ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log'), '-g', `daemon off; pid ${dir}/nginx.pid;`],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const errors = async (): Promise<string> => stderr + (await readFile(join(dir, 'error.log'), 'utf8').catch(() => ''));
  for (let i = 0; i < 100 && !(await reachable(port)); i++) {
    if (child.exitCode !== null) throw new Error(`nginx did not start: ${await errors()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  if (!(await reachable(port))) throw new Error(`nginx did not listen on ${port}: ${await errors()}`);
  return {
    port,
    dir,
    errors,
    stop: async () => {
      if (child.exitCode === null) {
        // TERM (fast shutdown), not QUIT (graceful): a gracefully stopping worker outlives its
        // master for as long as its cache-lock waiters and held upstream requests last (up to
        // proxy_cache_lock_timeout), and keeps asking the gateway for positions nobody follows,
        // which the next measurement on the same gateway counted as its own requests
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 3000);
        await exited;
        clearTimeout(t);
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
