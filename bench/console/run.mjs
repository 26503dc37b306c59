#!/usr/bin/env node
// What the console costs (issue 14): the one-shot workload of bench/oneshot served three ways,
// side by side in the same interleaved rounds (bench/lib/compare.mjs):
//   console off        gateway.console.enabled: false (bench/console/off.yaml)
//   console on         the default: console served, nobody watching (the cost that must be nil)
//   console watched    a console feed open during the run: every run traced, up to
//                      gateway.console.sample (50) runs a second, the rest untraced
//   npm run build && node bench/console/run.mjs [--seconds 5] [--rounds 3] [--connections 50]
import { parseArgs } from 'node:util';
import { compareHttp } from '../lib/compare.mjs';
import { sagawayStart } from '../lib/servers.mjs';
/* global fetch, AbortController, WritableStream */

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '50' },
  },
});
const log = (line) => process.stderr.write(`${line}\n`);
const servers = {};
const watching = new AbortController();
try {
  servers['console off'] = await sagawayStart('bench/console/off.yaml');
  servers['console on'] = await sagawayStart('bench/oneshot/sagaway.yaml');
  servers['console watched'] = await sagawayStart('bench/oneshot/sagaway.yaml');
  // A watcher that reads the feed (and drops it), as an open console page would.
  const feed = await fetch(`${servers['console watched'].base}/console/api/feed`, { signal: watching.signal });
  void feed.body.pipeTo(new WritableStream()).catch(() => undefined);
  const targets = Object.entries(servers).map(([name, s]) => ({
    name,
    url: `${s.base}/api/request/items/42`,
    pids: [s.pid],
  }));
  const out = await compareHttp(targets, {
    seconds: Number(values.seconds),
    rounds: Number(values.rounds),
    connections: Number(values.connections),
    log,
  });
  const off = out['console off'];
  console.log('target            req/s    p99 ms  CPU µs/req  vs off (req/s)  vs off (CPU)');
  for (const [name, r] of Object.entries(out)) {
    console.log(
      `${name.padEnd(16)} ${String(Math.round(r.rps)).padStart(6)} ${String(r.p99).padStart(8)} ${r.cpuUs
        .toFixed(0)
        .padStart(11)} ${(r.rps / off.rps).toFixed(3).padStart(15)} ${(r.cpuUs / off.cpuUs).toFixed(3).padStart(13)}`,
    );
  }
} finally {
  watching.abort();
  await Promise.all(Object.values(servers).map((s) => s.stop()));
}
