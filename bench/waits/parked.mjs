#!/usr/bin/env node
// Issue 21, target 1: 10,000 parked runs cost ≤ 2 KB of RSS each in the runner and no CPU while
// nothing is due. A gateway and one runner replica (NATS, PostgreSQL journal); runs of a 1 h
// timer are parked through the gateway. The runner's RSS is read after a full GC (it runs with
// --expose-gc; SIGUSR2 collects) after a warm-up of parked runs, and again after `--runs` more;
// the difference ÷ runs is the memory per parked run (also of the V8 heap in use, steadier). Then its CPU over `--idle` seconds with
// every run parked and nothing due: what is left is the wait poller's one query per
// runners.R.waitPoll (default 1 s; BENCH_WAIT_POLL sets it, e.g. 100ms), also measured the same way before parking.
//   node bench/waits/parked.mjs [--runs 10000] [--idle 30]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { sleep } from '../lib/proc.mjs';
import { dropTables, gateway, GC_ON_SIGNAL, loadAverage, PG, postMany, runner, workspace } from './setup.mjs';

const { values } = parseArgs({ options: { runs: { type: 'string' }, idle: { type: 'string' } } });
const RUNS = Number(values.runs ?? 10_000);
const IDLE_S = Number(values.idle ?? 30);
const WARM = 500;
const POLL_MS = pollMsOf(process.env['BENCH_WAIT_POLL']);

const ws = workspace({ nats: true });
const procs = [];
const load0 = loadAverage();
try {
  const gw = await gateway(ws);
  procs.push(gw);
  const memFile = join(ws.dir, 'memory.json');
  const rn = await runner(ws, { WAITBENCH_MEM: memFile }, GC_ON_SIGNAL);
  procs.push(rn);
  const rss = async () => {
    for (let i = 0; i < 2; i++) {
      rn.child.kill('SIGUSR2');
      await sleep(1000);
    }
    return { rss: rn.rss(), heap: JSON.parse(readFileSync(memFile, 'utf8')).heapUsed };
  };
  const idleCpu = async () => {
    const c0 = rn.cpuMs();
    const t0 = Date.now();
    await sleep(IDLE_S * 1000);
    return { ms: rn.cpuMs() - c0, s: (Date.now() - t0) / 1000 };
  };
  const path = () => '/api/request/later';
  await postMany(gw.base, WARM, path);
  const rss0 = await rss();
  const idle0 = await idleCpu();
  const t0 = Date.now();
  await postMany(gw.base, RUNS, path);
  const parkS = (Date.now() - t0) / 1000;
  const rss1 = await rss();
  const idle1 = await idleCpu();
  const c = new pg.Client({ connectionString: PG });
  await c.connect();
  const parked = Number((await c.query(`select count(*) as n from "${ws.prefix}_journal_waits"`)).rows[0].n);
  await c.end();
  const result = {
    runs: RUNS,
    parked,
    parkPerS: Math.round(RUNS / parkS),
    rssBeforeMiB: +(rss0.rss / 2 ** 20).toFixed(1),
    rssAfterMiB: +(rss1.rss / 2 ** 20).toFixed(1),
    bytesPerRun: Math.round((rss1.rss - rss0.rss) / RUNS),
    heapBeforeMiB: +(rss0.heap / 2 ** 20).toFixed(1),
    heapAfterMiB: +(rss1.heap / 2 ** 20).toFixed(1),
    heapBytesPerRun: Math.round((rss1.heap - rss0.heap) / RUNS),
    idleSeconds: IDLE_S,
    pollMs: POLL_MS,
    idleCpuMsPerS: { parked0: +(idle0.ms / idle0.s).toFixed(2), parkedAll: +(idle1.ms / idle1.s).toFixed(2) },
    idleCpuPct: +((100 * idle1.ms) / (idle1.s * 1000)).toFixed(2),
    cpuMsPerPoll: +(idle1.ms / (idle1.s / (POLL_MS / 1000))).toFixed(2),
    loadAverage: { start: load0, end: loadAverage() },
  };
  console.log(JSON.stringify(result));
} finally {
  for (const p of procs.reverse()) await p.stop().catch(() => undefined);
  await dropTables(ws.prefix).catch(() => undefined);
}

/** ms of a duration like 100ms / 1s (the bench's BENCH_WAIT_POLL), default 1 s. */
function pollMsOf(text) {
  const m = /^(\d+)(ms|s)$/.exec(text ?? '1s');
  return m ? Number(m[1]) * (m[2] === 's' ? 1000 : 1) : 1000;
}
