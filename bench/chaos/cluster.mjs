/* global clearTimeout */
// The fault suite's processes: a NATS server and a PostgreSQL cluster of its own (free ports,
// loopback, temporary folders), and sagaway's gateways, orchestrator replicas and worker as
// separate OS processes that can be killed (-9) and started again with the same arguments.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect as tcp } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, track } from '../lib/proc.mjs';
import { ROOT } from '../lib/servers.mjs';

const MAIN = join(ROOT, 'dist', 'src', 'cli', 'main.js');
export const NATS_SERVER = process.env.NATS_SERVER ?? '/usr/sbin/nats-server';

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Whether something accepts connections on 127.0.0.1:port. */
export function listening(port) {
  return new Promise((resolve) => {
    const s = tcp({ port, host: '127.0.0.1' });
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

async function untilListening(port, ms, what) {
  const end = Date.now() + ms;
  while (!(await listening(port))) {
    if (Date.now() > end) throw new Error(`${what} not listening on ${port} after ${ms} ms`);
    await sleep(100);
  }
}

/** A process started with fixed arguments: kill -9 and start again. */
class Restartable {
  constructor(name, command, args, { env = {}, ready }) {
    Object.assign(this, { name, command, args, env, ready });
    this.child = undefined;
    this.tail = [];
  }

  async start() {
    const child = track(
      spawn(this.command, this.args, { env: { ...process.env, ...this.env }, stdio: ['ignore', 'pipe', 'pipe'] }),
    );
    this.child = child;
    const keep = (d) => {
      for (const line of String(d).split('\n')) if (line) this.tail.push(line);
      if (this.tail.length > 400) this.tail.splice(0, this.tail.length - 200);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const exited = new Promise((_, reject) =>
      child.once('exit', (code) =>
        reject(new Error(`${this.name} exited (${code}): ${this.tail.slice(-5).join(' | ')}`)),
      ),
    );
    exited.catch(() => undefined);
    await Promise.race([this.ready(this), exited]);
  }

  /** kill -9, and wait for the exit. */
  async kill() {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await gone;
  }

  /** SIGTERM, then -9 after 3 s. */
  async stop() {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((r) => child.once('exit', r));
    const t = setTimeout(() => child.kill('SIGKILL'), 3000);
    child.kill('SIGTERM');
    await gone;
    clearTimeout(t);
  }
}

/** A NATS server with JetStream on a free port, storage in its own folder (kept across restarts). */
export async function startNats() {
  const dir = await mkdtemp(join(tmpdir(), 'sagaway-chaos-nats-'));
  const port = await freePort();
  const proc = new Restartable('nats', NATS_SERVER, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], {
    ready: () => untilListening(port, 10_000, 'nats-server'),
  });
  await proc.start();
  return {
    url: `nats://127.0.0.1:${port}`,
    proc,
    async destroy() {
      await proc.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A PostgreSQL cluster of its own (initdb/pg_ctl, the tests' helper), on a free port. */
export async function startPostgres() {
  const { findPgBin, startOwnPostgres } = await import(join(ROOT, 'dist', 'test', 'states', 'own-postgres.js'));
  const bin = findPgBin();
  if (!bin) throw new Error('PostgreSQL server binaries (initdb, pg_ctl) not found under /usr/lib/postgresql');
  return startOwnPostgres(bin);
}

/** The sagaway processes of one scenario, from one configuration file. */
export class Sagaway {
  constructor(dir, env) {
    this.dir = dir;
    this.env = env;
    this.procs = [];
  }

  static async create(config, env) {
    const dir = await mkdtemp(join(tmpdir(), 'sagaway-chaos-'));
    await writeFile(join(dir, 'sagaway.yaml'), JSON.stringify(config, null, 2));
    return new Sagaway(dir, env);
  }

  get config() {
    return join(this.dir, 'sagaway.yaml');
  }

  /** A sagaway process; ready once it logged that it started. */
  add(name, args) {
    const proc = new Restartable(name, process.execPath, [MAIN, ...args, '--config', this.config], {
      env: { LOG_LEVEL: 'info', ...this.env },
      ready: (p) =>
        new Promise((resolve, reject) => {
          const t = setTimeout(() => reject(new Error(`${name} did not start in 60 s`)), 60_000);
          const on = (d) => {
            if (/sagaway (gateway|runner) started/.test(String(d))) {
              clearTimeout(t);
              p.child.stdout.off('data', on);
              resolve();
            }
          };
          p.child.stdout.on('data', on);
        }),
    });
    this.procs.push(proc);
    return proc;
  }

  /** Stop every process; the last log lines of each go to `logDir` (for a look afterwards). */
  async stop(logDir) {
    await Promise.all(this.procs.map((p) => p.stop()));
    if (logDir) {
      for (const p of this.procs)
        await writeFile(join(logDir, `${p.name}.log`), p.tail.join('\n')).catch(() => undefined);
    }
    await rm(this.dir, { recursive: true, force: true });
  }
}
