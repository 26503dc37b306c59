#!/usr/bin/env node
// Issue 21, target 3: park and resume `--runs` (1,000) runs by signal over HTTP. `sagaway start`
// (the gateway and the runner in one process, a PostgreSQL journal): each run of a signal wait
// is started (202, parked), then signalled by run (`POST /api/runs/<id>/signals/go`, 202), with
// `--connections` requests in flight; the run is done when the step after its wait has run.
// Throughput = runs ÷ the time from the first start to the last step after a wait.
//   node bench/waits/signals.mjs [--runs 1000] [--connections 50]
import { parseArgs } from 'node:util';
import { dropTables, loadAverage, marks, postMany, single, until, workspace } from './setup.mjs';

const { values } = parseArgs({ options: { runs: { type: 'string' }, connections: { type: 'string' } } });
const RUNS = Number(values.runs ?? 1000);
const CONC = Number(values.connections ?? 50);

const ws = workspace({ nats: false });
const procs = [];
const load0 = loadAverage();
try {
  const sw = await single(ws);
  procs.push(sw);
  // warm-up: the same round on a few runs, not counted
  const warm = await postMany(sw.base, 50, () => '/api/request/hold', { concurrency: CONC });
  await postMany(sw.base, warm.length, (i) => `/api/runs/${warm[i]}/signals/go`, { concurrency: CONC });
  await until(() => marks(ws.log).length >= warm.length, 60_000, 50);
  const base = marks(ws.log).length;
  const cpu0 = sw.cpuMs();
  const t0 = Date.now();
  const ids = await postMany(sw.base, RUNS, () => '/api/request/hold', { concurrency: CONC });
  const t1 = Date.now();
  await postMany(sw.base, RUNS, (i) => `/api/runs/${ids[i]}/signals/go`, { concurrency: CONC });
  const t2 = Date.now();
  await until(() => marks(ws.log).length >= base + RUNS, 5 * 60_000, 20);
  const t3 = Math.max(...marks(ws.log).map((l) => l.t));
  const result = {
    runs: RUNS,
    connections: CONC,
    runsPerS: Math.round(RUNS / ((t3 - t0) / 1000)),
    parkPerS: Math.round(RUNS / ((t1 - t0) / 1000)),
    signalPerS: Math.round(RUNS / ((t2 - t1) / 1000)),
    lastResumeAfterLastSignalMs: t3 - t2,
    seconds: +((t3 - t0) / 1000).toFixed(2),
    cpuMsPerRun: +((sw.cpuMs() - cpu0) / RUNS).toFixed(2),
    loadAverage: { start: load0, end: loadAverage() },
  };
  console.log(JSON.stringify(result));
} finally {
  for (const p of procs.reverse()) await p.stop().catch(() => undefined);
  await dropTables(ws.prefix).catch(() => undefined);
}
