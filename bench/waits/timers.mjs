#!/usr/bin/env node
// Issue 21, target 2: 10,000 timers due in the same second across 2 runner replicas on
// PostgreSQL: each fires exactly once, p99 lateness ≤ 1 s. A gateway and two runner replicas
// share a PostgreSQL journal; `--runs` runs of a timer `until: parameters.at` are parked, all
// with the same `at` (`--lead` seconds after the start, so that every run is parked before it).
// The step after the wait notes its run, process and time: executions per run (must be 1) and
// lateness = the time that step ran − `at`. The replicas poll every runners.R.waitPoll (BENCH_WAIT_POLL)
// (default 1 s), each taking at most 100 waits per query and polling again at once.
//   node bench/waits/timers.mjs [--runs 10000] [--lead 75]
import { parseArgs } from 'node:util';
import { sleep } from '../lib/proc.mjs';
import { dropTables, gateway, loadAverage, marks, postMany, runner, until, workspace } from './setup.mjs';

const { values } = parseArgs({ options: { runs: { type: 'string' }, lead: { type: 'string' } } });
const RUNS = Number(values.runs ?? 10_000);
const LEAD_S = Number(values.lead ?? 75);

const ws = workspace({ nats: true });
const procs = [];
const load0 = loadAverage();
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
try {
  const gw = await gateway(ws);
  procs.push(gw);
  procs.push(await runner(ws), await runner(ws));
  const at = Date.now() + LEAD_S * 1000;
  const ids = await postMany(gw.base, RUNS, () => '/api/request/dated', { body: () => ({ at }) });
  const parkedBy = Date.now();
  if (parkedBy >= at) throw new Error(`parking took longer than --lead (${LEAD_S} s): raise it`);
  const cpu0 = procs.map((p) => p.cpuMs());
  await until(() => marks(ws.log).length >= RUNS, 10 * 60_000, 500);
  const doneAt = Date.now();
  await sleep(5000); // a timer fired twice would show here
  const lines = marks(ws.log);
  const byRun = new Map();
  for (const l of lines) byRun.set(l.run, [...(byRun.get(l.run) ?? []), l]);
  const counts = ids.map((id) => byRun.get(id)?.length ?? 0);
  const lateness = ids.map((id) => Math.min(...byRun.get(id).map((l) => l.t)) - at).sort((a, b) => a - b);
  const perPid = {};
  for (const l of lines) perPid[l.pid] = (perPid[l.pid] ?? 0) + 1;
  const result = {
    runs: RUNS,
    leadS: LEAD_S,
    parkSeconds: +((parkedBy - (at - LEAD_S * 1000)) / 1000).toFixed(1),
    firedOnce: counts.filter((n) => n === 1).length,
    firedTwiceOrMore: counts.filter((n) => n > 1).length,
    neverFired: counts.filter((n) => n === 0).length,
    executions: lines.length,
    latenessMs: {
      min: lateness[0],
      p50: pct(lateness, 50),
      p90: pct(lateness, 90),
      p99: pct(lateness, 99),
      max: lateness.at(-1),
    },
    allFiredWithinS: +((doneAt - at) / 1000).toFixed(1),
    perReplica: Object.values(perPid),
    cpuMsWhileFiring: procs.map((p, i) => Math.round(p.cpuMs() - cpu0[i])),
    pollMs: pollMsOf(process.env['BENCH_WAIT_POLL']),
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
