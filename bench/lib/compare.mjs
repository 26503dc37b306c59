// Side-by-side HTTP throughput: every server of a workload runs at once (idle ones cost no
// CPU), each is warmed up, then measured in interleaved rounds so that all of them see the
// same machine state; the median round is reported.
import { httpLoad } from './load.mjs';

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * targets: [{ name, url }] (servers already started). Returns { [name]: { rps, p50, p99 } }
 * with the median requests/s over `rounds` rounds of `seconds` each.
 */
export async function compareHttp(targets, { connections, seconds, rounds, warmup = 2, log }) {
  for (const t of targets) await httpLoad(t.url, { connections, seconds: warmup });
  const runs = Object.fromEntries(targets.map((t) => [t.name, []]));
  for (let r = 0; r < rounds; r++) {
    for (const t of targets) {
      const res = await httpLoad(t.url, { connections, seconds });
      runs[t.name].push(res);
      log?.(`  round ${r + 1} ${t.name}: ${Math.round(res.rps)} req/s, p99 ${res.p99} ms`);
    }
  }
  const out = {};
  for (const [name, rs] of Object.entries(runs)) {
    const rps = median(rs.map((x) => x.rps));
    const mid = rs.find((x) => x.rps === rps);
    out[name] = { rps, p50: mid.p50, p99: mid.p99 };
  }
  return out;
}
