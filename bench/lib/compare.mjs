// Side-by-side HTTP throughput: every server of a workload runs at once (idle ones cost no
// CPU), each is warmed up, then measured in interleaved rounds so that all of them see the
// same machine state; the median round is reported.
import { httpLoad } from './load.mjs';
import { cpuMsOf } from './proc.mjs';

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * targets: [{ name, url, pids }] (servers already started; pids = the processes serving it,
 * whose CPU time is counted). Returns { [name]: { rps, p50, p99, cpuUs } } with the median
 * requests/s over `rounds` rounds of `seconds` each; cpuUs is the CPU time the servers used per
 * request in that round (user + system), which contention on a shared machine moves far less
 * than requests/s.
 */
export async function compareHttp(targets, { connections, seconds, rounds, warmup = 2, log }) {
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
    out[name] = { rps, p50: mid.p50, p99: mid.p99, cpuUs: median(rs.map((x) => x.cpuUs)) };
  }
  return out;
}
