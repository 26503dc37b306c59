// Side-by-side HTTP throughput: every server of a workload runs at once (idle ones cost no
// CPU), each is warmed up, then measured in interleaved rounds so that all of them see the
// same machine state; the median round is reported.
import { httpLoad } from './load.mjs';
import { cpuMsOf, peakRssOf } from './proc.mjs';
/* global fetch */

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** JSON with object keys sorted, so that answers compare regardless of key order. */
const canonical = (v) =>
  JSON.stringify(v, (_k, x) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1)))
      : x,
  );

/**
 * Equal work: every target must answer the same JSON (key order aside) as the first one, or the
 * comparison is refused.
 */
export async function sameAnswers(targets) {
  let first;
  for (const t of targets) {
    const res = await fetch(t.url);
    const body = canonical(await res.json());
    if (res.status !== 200) throw new Error(`${t.name} answered ${res.status}: ${body}`);
    first ??= { name: t.name, body };
    if (body !== first.body) throw new Error(`${t.name} answers ${body}, but ${first.name} answers ${first.body}`);
  }
}

/**
 * Starts each server with `start()`; a peer that fails to start is left out with a note instead
 * of ending the workload (sagaway failing to start still ends it). Returns the started ones.
 */
export async function startEach(specs, servers, notes) {
  const out = {};
  for (const [name, start] of Object.entries(specs)) {
    try {
      out[name] = await start();
      servers.push(out[name]);
    } catch (err) {
      if (name === 'sagaway') throw err;
      notes.push(`${name} did not start, left out: ${String(err.message).split('\n')[0]}`);
    }
  }
  return out;
}

/**
 * targets: [{ name, url, pids }] (servers already started; pids = the processes serving it,
 * whose CPU time is counted). Returns { [name]: { rps, p50, p99, cpuUs, peakRss } } with the median
 * requests/s over `rounds` rounds of `seconds` each; cpuUs is the CPU time the servers used per
 * request in that round (user + system), which contention on a shared machine moves far less
 * than requests/s.
 */
export async function compareHttp(targets, { connections, seconds, rounds, warmup = 2, log, same = true }) {
  // same: false when the caller checks groups of targets that do different work itself.
  if (same) await sameAnswers(targets);
  for (const t of targets) await httpLoad(t.url, { connections, seconds: warmup });
  const runs = Object.fromEntries(targets.map((t) => [t.name, []]));
  for (let r = 0; r < rounds; r++) {
    for (const t of targets) {
      const cpu = () => (t.pids ?? []).reduce((a, pid) => a + cpuMsOf(pid), 0);
      const before = cpu();
      const res = await httpLoad(t.url, { connections, seconds });
      res.cpuUs = ((cpu() - before) * 1000) / res.total;
      runs[t.name].push(res);
      log?.(
        `  round ${r + 1} ${t.name}: ${Math.round(res.rps)} req/s, p99 ${res.p99} ms, ${res.cpuUs.toFixed(0)} µs CPU/req`,
      );
    }
  }
  const out = {};
  for (const [name, rs] of Object.entries(runs)) {
    const rps = median(rs.map((x) => x.rps));
    const mid = rs.find((x) => x.rps === rps);
    const pids = targets.find((t) => t.name === name)?.pids ?? [];
    const peakRss = pids.reduce((a, pid) => a + peakRssOf(pid), 0);
    // cpuUsMin: the round with the least contention, a lower bound that other jobs move less
    const cpuUsMin = Math.min(...rs.map((x) => x.cpuUs));
    out[name] = { rps, p50: mid.p50, p99: mid.p99, cpuUs: median(rs.map((x) => x.cpuUs)), cpuUsMin, peakRss };
  }
  return out;
}
