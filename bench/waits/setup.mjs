// What the wait benchmarks share (issue 21's targets): a configuration with a timer saga, a
// dated timer saga and a signal saga on a PostgreSQL journal, a handler that notes when the step
// after a wait ran, the processes, and the PostgreSQL tables (dropped afterwards).
/* global fetch */
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { stringify } from 'yaml';
import { sagawayProcess } from '../lib/servers.mjs';

export const PG = process.env['SAGAWAY_BENCH_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test_waitbench';
export const NATS = 'nats://127.0.0.1:4222';
const HERE = dirname(fileURLToPath(import.meta.url));
/** Preloaded into a measured process with --expose-gc: SIGUSR2 runs a full GC. */
export const GC_ON_SIGNAL = ['--expose-gc', '--import', join(HERE, 'gc-on-signal.mjs')];

// The step after each wait: notes the run, the process and the time it ran (one line each).
const MARK_HANDLER = `
import { appendFileSync } from 'node:fs';
export default { name: 'mark', actions: { Mark: { 0: (input, ctx) => {
  appendFileSync(process.env.WAITBENCH_LOG, JSON.stringify({ run: ctx.idempotencyKey.split(':')[0], pid: process.pid, t: Date.now() }) + '\\n');
  return {};
} } } };
`;

function config(prefix, { nats }) {
  const mark = { handler: 'mark', action: 'Mark', version: 0, outputElement: '-' };
  const saga = (id, wait) => ({
    id,
    path: `/${id}`,
    methods: ['POST'],
    steps: [
      { id: 'start', type: 'start', links: [{ to: 'pause' }] },
      { id: 'pause', type: 'wait', ...wait, links: [{ to: 'mark', when: [wait.signal ? 'SIGNAL' : 'SUCCESS'] }] },
      { id: 'mark', type: 'event', eventMeta: mark, links: [{ to: 'ok' }] },
      { id: 'ok', type: 'success' },
    ],
  });
  return {
    gateway: { apis: [{ path: '/', runner: 'api', public: true }], limits: { rate: false } },
    ...(nats ? { systems: { bus: { type: 'nats', servers: [NATS], prefix } }, defaultSystem: 'bus' } : {}),
    states: { jr: { type: 'postgres', url: PG, table: `${prefix}_journal` } },
    runners: {
      api: {
        journal: 'jr',
        // runners.R.waitPoll; BENCH_WAIT_POLL overrides the default 1s (e.g. 100ms)
        ...(process.env['BENCH_WAIT_POLL'] ? { waitPoll: process.env['BENCH_WAIT_POLL'] } : {}),
        handlers: ['./mark.mjs'],
        sagas: [
          saga('later', { for: '1h' }),
          saga('dated', { until: 'parameters.at' }),
          saga('hold', { signal: { name: 'go' }, timeout: '1h' }),
        ],
      },
    },
  };
}

/** A fresh directory with sagaway.yaml, mark.mjs and the log path. */
export function workspace({ nats }) {
  const dir = mkdtempSync(join(tmpdir(), 'sagaway-waitbench-'));
  const prefix = `wb${process.pid}`;
  writeFileSync(join(dir, 'sagaway.yaml'), stringify(config(prefix, { nats })));
  writeFileSync(join(dir, 'mark.mjs'), MARK_HANDLER);
  const log = join(dir, 'marks.log');
  appendFileSync(log, '');
  return { dir, prefix, config: join(dir, 'sagaway.yaml'), log };
}

/** The lines the mark handler wrote so far. */
export function marks(log) {
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

/** BENCH_NODE_ARGS: node flags for the measured sagaway processes (e.g. `--cpu-prof --cpu-prof-dir=/tmp/p`). */
const NODE_ARGS = (process.env['BENCH_NODE_ARGS'] ?? '').split(' ').filter(Boolean);

/** A gateway process (NATS) of the workspace. */
export function gateway(ws, env = {}) {
  return sagawayProcess(['gateway', '--config', ws.config], {
    env: { WAITBENCH_LOG: ws.log, ...env },
    nodeArgs: NODE_ARGS,
  });
}

/** A runner replica of the workspace; nodeArgs e.g. GC_ON_SIGNAL. */
export function runner(ws, env = {}, nodeArgs = []) {
  return sagawayProcess(['runner', '--config', ws.config, '--runner', 'api'], {
    env: { WAITBENCH_LOG: ws.log, ...env },
    nodeArgs: [...NODE_ARGS, ...nodeArgs],
    probe: false,
  }).then(async (svc) => {
    for (let i = 0; i < 200; i++) {
      const ok = await fetch(`${svc.base}/readyz`)
        .then((r) => r.status === 200)
        .catch(() => false);
      if (ok) return svc;
      await new Promise((r) => setTimeout(r, 150));
    }
    throw new Error(`runner not ready:\n${svc.output()}`);
  });
}

/** `sagaway start`: the gateway and the runner in one process, no NATS. */
export function single(ws, env = {}) {
  return sagawayProcess(['start', '--config', ws.config], {
    env: { WAITBENCH_LOG: ws.log, ...env },
    nodeArgs: NODE_ARGS,
  });
}

/** Drop the workspace's PostgreSQL tables. */
export async function dropTables(prefix) {
  const c = new pg.Client({ connectionString: PG });
  await c.connect();
  try {
    const t = `${prefix}_journal`;
    await c.query(`drop table if exists "${t}", "${t}_idem", "${t}_waits", "${t}_signals"`);
  } finally {
    await c.end();
  }
}

/**
 * POST `n` requests with `concurrency` in flight; each must answer `status`. Resolves with the
 * run ids (x-request-id) in order of answer.
 */
export async function postMany(base, n, pathOf, { body = () => ({}), status = 202, concurrency = 50 } = {}) {
  const ids = [];
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= n) return;
      const res = await fetch(`${base}${pathOf(i)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body(i)),
      });
      const text = await res.text();
      if (res.status !== status) throw new Error(`${pathOf(i)}: ${res.status} ${text}`);
      ids[i] = res.headers.get('x-request-id');
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return ids;
}

/** Resolves once `check()` is true, polling every `every` ms; throws after `timeoutMs`. */
export async function until(check, timeoutMs, every = 250) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, every));
  }
}

/** The machine's 1-minute load average. */
export const loadAverage = () => Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
