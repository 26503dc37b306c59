import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { connect as tcpConnect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { prefixStreams } from '../nats-available.js';

export { skipOrFail } from '../require-services.js';

/**
 * Multi-process harness: gateway and runners as separate OS processes
 * (`node dist/src/cli/main.js gateway|runner ...`), their JSON log lines, and helpers to wait.
 */

const MAIN = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'cli', 'main.js');

/** A unique subject/stream prefix per test run, so runs on the shared NATS never collide. */
export function uniquePrefix(tag: string): string {
  return `t${tag}${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
}

/** Whether something listens on host:port. */
export function reachable(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((done) => {
    const s = tcpConnect({ port, host });
    s.once('connect', () => {
      s.destroy();
      done(true);
    });
    s.once('error', () => done(false));
    s.setTimeout(1000, () => {
      s.destroy();
      done(false);
    });
  });
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const srv = createServer();
    srv.once('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => done(port));
    });
  });
}

/** One started process. */
export class Proc {
  readonly lines: Record<string, unknown>[] = [];
  stderr = '';
  private waiters: { pred: (l: Record<string, unknown>) => boolean; done: (l: Record<string, unknown>) => void }[] = [];
  exited = false;

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {
    let buf = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buf += chunk.toString('utf8');
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const text = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        let line: Record<string, unknown>;
        try {
          line = JSON.parse(text) as Record<string, unknown>;
        } catch {
          continue;
        }
        this.lines.push(line);
        this.waiters = this.waiters.filter((w) => {
          if (!w.pred(line)) return true;
          w.done(line);
          return false;
        });
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString('utf8');
    });
    child.once('exit', () => {
      this.exited = true;
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** The first log line (past or future) matching `pred`. */
  waitForLog(pred: (l: Record<string, unknown>) => boolean, timeoutMs = 15_000): Promise<Record<string, unknown>> {
    const seen = this.lines.find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise((done, fail) => {
      const t = setTimeout(
        () =>
          fail(new Error(`${this.name}: no matching log line in ${timeoutMs} ms; stderr: ${this.stderr.slice(-500)}`)),
        timeoutMs,
      );
      this.waiters.push({
        pred,
        done: (l) => {
          clearTimeout(t);
          done(l);
        },
      });
    });
  }

  /** Send a signal and wait for the exit. */
  async kill(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (this.exited) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.kill(signal);
    await exited;
  }
}

/** A temporary folder with a configuration, and the processes started from it. */
export class Cluster {
  readonly procs: Proc[] = [];
  private constructor(readonly dir: string) {}

  /** Write `files` (the config as `sagaway.yaml`, handler modules...) into a new temporary folder. */
  static async create(files: Record<string, string>): Promise<Cluster> {
    const dir = await mkdtemp(join(tmpdir(), 'sagaway-dist-'));
    for (const [name, text] of Object.entries(files)) {
      await mkdir(dirname(join(dir, name)), { recursive: true });
      await writeFile(join(dir, name), text);
    }
    return new Cluster(dir);
  }

  get config(): string {
    return join(this.dir, 'sagaway.yaml');
  }

  /** Start `sagaway <args>` and wait for its "started" log line. */
  async start(name: string, args: string[], env: Record<string, string> = {}): Promise<Proc> {
    const child = spawn(process.execPath, [MAIN, ...args], {
      cwd: this.dir,
      env: { ...process.env, LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const proc = new Proc(name, child);
    this.procs.push(proc);
    // 30 s: several processes starting at once on a loaded 2-core machine take their time
    await proc.waitForLog(
      (l) => typeof l['msg'] === 'string' && /^sagaway (gateway|runner) started$/.test(l['msg']),
      30_000,
    );
    return proc;
  }

  /** A gateway on a free port; resolves with its port. */
  async gateway(env: Record<string, string> = {}): Promise<{ proc: Proc; port: number }> {
    const proc = await this.start('gateway', ['gateway', '--config', this.config, '--port', '0'], env);
    const line = proc.lines.find((l) => l['msg'] === 'sagaway gateway started')!;
    return { proc, port: line['port'] as number };
  }

  /** A runner replica; resolves once its health port answers ready (NATS connected). */
  async runner(
    runner: string,
    deployment?: string,
    env: Record<string, string> = {},
  ): Promise<{ proc: Proc; port: number }> {
    const args = ['runner', '--config', this.config, '--runner', runner];
    if (deployment !== undefined) args.push('--deployment', deployment);
    const proc = await this.start(`${runner}/${deployment ?? '-'}`, args, env);
    const port = proc.lines.find((l) => l['msg'] === 'sagaway runner started')!['port'] as number;
    await waitUntil(
      async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200,
      10_000,
    );
    return { proc, port };
  }

  /** Stop every process (kill -9 whatever does not stop in time) and remove the folder. */
  async close(): Promise<void> {
    await Promise.all(
      this.procs.map(async (p) => {
        const t = setTimeout(() => p.child.kill('SIGKILL'), 3000);
        await p.kill('SIGTERM');
        clearTimeout(t);
      }),
    );
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** Poll `check` until it returns true. */
export async function waitUntil(
  check: () => Promise<boolean> | boolean,
  timeoutMs: number,
  everyMs = 50,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > end) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** A GET or POST to the gateway; body parsed as JSON when it is JSON. */
export async function call(
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<{ status: number; body: unknown; headers: Headers; ms: number }> {
  const t = Date.now();
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method: options.method ?? 'GET',
    headers: { ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}), ...options.headers },
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* text */
  }
  return { status: res.status, body, headers: res.headers, ms: Date.now() - t };
}

/** Delete the JetStream streams of a test prefix from a NATS server (best effort). */
export async function dropStreams(servers: string, prefix: string): Promise<void> {
  const { connect } = await import('@nats-io/transport-node');
  const { jetstreamManager } = await import('@nats-io/jetstream');
  const nc = await connect({ servers, timeout: 2000 }).catch(() => undefined);
  if (!nc) return;
  try {
    const jsm = await jetstreamManager(nc);
    for (const name of await prefixStreams(jsm, prefix)) await jsm.streams.delete(name).catch(() => undefined);
  } finally {
    await nc.close();
  }
}

/**
 * Source of the test handler module `work`: each action appends one line
 * `{what, tag, key}` to $SAGAWAY_TEST_LOG, so tests count who ran what.
 */
export const WORK_HANDLER = `
import { appendFileSync } from 'node:fs';
const note = (what, ctx, extra = {}) => appendFileSync(process.env.SAGAWAY_TEST_LOG, JSON.stringify({ what, tag: process.env.SAGAWAY_TEST_TAG, pid: process.pid, key: ctx.idempotencyKey, ...extra }) + '\\n');
const sleep = (ms, signal) => new Promise((r) => { const t = setTimeout(r, ms); signal.addEventListener('abort', () => { clearTimeout(t); r(); }); });
export default {
  name: 'work',
  actions: {
    Echo: { 0: (input, ctx) => { note('Echo', ctx); return { input, parameters: ctx.parameters, tag: process.env.SAGAWAY_TEST_TAG }; } },
    Count: { 0: (input, ctx) => { note('Count', ctx); return { tag: process.env.SAGAWAY_TEST_TAG }; } },
    Secret: { 0: (input, ctx) => { note('Secret', ctx); return { authorised: ctx.parameters.auth === process.env.SAGAWAY_SECRET_TOKEN }; } },
    Slow: {
      0: async (input, ctx) => {
        note('SlowStart', ctx);
        await sleep(ctx.parameters.ms ?? 1000, ctx.signal);
        const rec = await ctx.state('ledger').create(ctx.idempotencyKey, { tag: process.env.SAGAWAY_TEST_TAG }, { idempotencyKey: ctx.idempotencyKey });
        note('SlowDone', ctx);
        return { tag: process.env.SAGAWAY_TEST_TAG, version: rec.version };
      },
    },
    Mark: {
      0: async (input, ctx) => {
        note('Mark', ctx);
        await ctx.state('ledger').create(ctx.idempotencyKey, { step: 'mark' }, { idempotencyKey: ctx.idempotencyKey });
        return { marked: true };
      },
    },
  },
};
`;

/** Lines of the handler log. */
export async function handlerLog(file: string): Promise<{ what: string; tag: string; pid: number; key: string }[]> {
  const { readFile } = await import('node:fs/promises');
  const text = await readFile(file, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { what: string; tag: string; pid: number; key: string });
}

/**
 * An API-key client for public APIs: /api/status finds an anonymous caller's run by its run id
 * only, so a test that reads a run by its own X-Request-Id (while the request is still pending)
 * calls as this client. `gateway.auth` of its config takes CLIENT_AUTH.
 */
export const CLIENT = Object.freeze({ 'x-api-key': 'client-key' });
export const CLIENT_AUTH = {
  apiKeys: [{ name: 'client', sha256: createHash('sha256').update('client-key').digest('hex') }],
};
