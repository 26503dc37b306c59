#!/usr/bin/env node
// The long-poll form without a cache, side by side with another checkout (issue 25):
//   node bench/longpoll/direct.mjs [--base DIR] [--rounds 3] [--n 1000] [--seconds 5] [--pin] [--floor]
// Starts this checkout's gateway and, with --base, DIR's (each built; bench/sse/sagaway.yaml,
// share: all) and measures, per round and in turn, the gateway's µs of CPU per delivered event
// for --n long-poll clients and for --n SSE clients of the /changes?wait=1000 feed (the suite's
// "no cache" rows), then prints each figure's median and the ratio long-poll / SSE. Interleaved
// rounds, so that the other load of the machine weighs on both sides alike. --floor also measures
// bench/longpoll/bare-server.mjs (plain node:http, the same protocol): Node's own cost per request.
/* global performance */
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { cpuMsOf, freePort, sleep, startService } from '../lib/proc.mjs';
import { configureRuntime, serverNode } from '../lib/runtime.mjs';
import { ROOT } from '../lib/servers.mjs';
import { LP, measure, NOFILE, run, SSE } from './run.mjs';

const { values } = parseArgs({
  options: {
    base: { type: 'string' },
    rounds: { type: 'string', default: '3' },
    n: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '5' },
    pin: { type: 'boolean', default: false },
    floor: { type: 'boolean', default: false },
  },
});
if (values.pin) configureRuntime({ serverCpu: 0, loadCpu: 1 });

async function gateway(root) {
  const port = await freePort();
  const cli = join(root, 'dist', 'src', 'cli', 'main.js');
  const config = join(ROOT, 'bench', 'sse', 'sagaway.yaml');
  const svc = await startService('sagaway', serverNode(), [cli, 'start', '--config', config, '--port', String(port)], {
    nofile: NOFILE,
    probe: `http://127.0.0.1:${port}/healthz`,
  });
  return { ...svc, port, base: `http://127.0.0.1:${port}` };
}

const sides = [{ name: 'this', root: ROOT }];
if (values.base) sides.push({ name: 'base', root: values.base });
const args = (s) => ['--url', `${s.base}/api/stream/changes?wait=1000`, '--n', values.n, '--seconds', values.seconds];
const load0 = loadavg()[0];
let floor;
if (values.floor) {
  const port = await freePort();
  floor = await startService('bare', serverNode(), [join(ROOT, 'bench', 'longpoll', 'bare-server.mjs')], {
    env: { PORT: String(port) },
    nofile: NOFILE,
    probe: `http://127.0.0.1:${port}/healthz`,
  });
  floor = { ...floor, base: `http://127.0.0.1:${port}`, lp: [] };
}
for (const side of sides) {
  side.gw = await gateway(side.root);
  side.lp = [];
  side.sse = [];
}
try {
  for (let r = 0; r < Number(values.rounds); r++) {
    for (const side of r % 2 ? [...sides].reverse() : sides) {
      const lp = await measure(side.gw, LP, args(side.gw));
      await sleep(1000);
      const sse = await measure(side.gw, SSE, [...args(side.gw), '--warmup', '2']);
      await sleep(1000);
      side.lp.push(lp.cpuUsPerEvent);
      side.sse.push(sse.cpuUsPerEvent);
      side.perRequest = [...(side.perRequest ?? []), (lp.cpuUsPerEvent * lp.events) / lp.requests];
      console.error(
        `round ${r + 1} ${side.name}: long-poll ${lp.cpuUsPerEvent.toFixed(2)} µs/event (${Math.round(lp.eventsPerSec)} events/s, ${Math.round(lp.requestsPerSec)} req/s, ${lp.runsPerSec.toFixed(2)} runs/s), SSE ${sse.cpuUsPerEvent.toFixed(2)} µs/event (${Math.round(sse.eventsPerSec)} events/s)`,
      );
    }
    if (floor) {
      const lp = await bareMeasure(floor);
      floor.lp.push(lp);
      console.error(
        `round ${r + 1} bare node:http: ${lp.cpuUsPerEvent.toFixed(2)} µs/event, ${lp.perRequest.toFixed(1)} µs/request (${Math.round(lp.eventsPerSec)} events/s, ${Math.round(lp.requestsPerSec)} req/s)`,
      );
      await sleep(1000);
    }
  }
} finally {
  for (const side of sides) await side.gw.stop();
  await floor?.stop();
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`load average ${load0.toFixed(2)} → ${loadavg()[0].toFixed(2)}, Node ${process.version}`);
for (const side of sides) {
  const lp = median(side.lp);
  const sse = median(side.sse);
  console.log(
    `${side.name}: long-poll ${lp.toFixed(2)} µs CPU/event (${median(side.perRequest).toFixed(1)} µs/request), SSE ${sse.toFixed(2)}: ${(lp / sse).toFixed(2)}× (target ≤ 1.5×)`,
  );
}
if (floor) {
  const ev = median(floor.lp.map((x) => x.cpuUsPerEvent));
  const sse = median(sides[0].sse);
  console.log(
    `bare node:http long-poll: ${ev.toFixed(2)} µs CPU/event (${median(floor.lp.map((x) => x.perRequest)).toFixed(1)} µs/request): ${(ev / sse).toFixed(2)}× this side's SSE`,
  );
}

/** The bare server's CPU per event and per request under the same clients (no sagaway metrics to read). */
async function bareMeasure(svc) {
  let c0;
  let t0;
  const r = await run(LP, args(svc), (line) => {
    if (line.phase !== 'measuring') return;
    c0 = cpuMsOf(svc.pid);
    t0 = performance.now();
  });
  const cpuMs = cpuMsOf(svc.pid) - c0;
  const secs = (performance.now() - t0) / 1000;
  return {
    cpuUsPerEvent: (cpuMs * 1000) / r.events,
    perRequest: (cpuMs * 1000) / r.requests,
    eventsPerSec: r.events / secs,
    requestsPerSec: r.requests / secs,
  };
}
