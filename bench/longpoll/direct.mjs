#!/usr/bin/env node
// The long-poll form without a cache, side by side with another checkout (issue 25):
//   node bench/longpoll/direct.mjs [--base DIR] [--rounds 3] [--n 1000] [--seconds 5] [--pin]
// Starts this checkout's gateway and, with --base, DIR's (each built; bench/sse/sagaway.yaml,
// share: all) and measures, per round and in turn, the gateway's µs of CPU per delivered event
// for --n long-poll clients and for --n SSE clients of the /changes?wait=1000 feed (the suite's
// "no cache" rows), then prints each figure's median and the ratio long-poll / SSE. Interleaved
// rounds, so that the other load of the machine weighs on both sides alike.
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { freePort, sleep, startService } from '../lib/proc.mjs';
import { configureRuntime, serverNode } from '../lib/runtime.mjs';
import { ROOT } from '../lib/servers.mjs';
import { LP, measure, NOFILE, SSE } from './run.mjs';

const { values } = parseArgs({
  options: {
    base: { type: 'string' },
    rounds: { type: 'string', default: '3' },
    n: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '5' },
    pin: { type: 'boolean', default: false },
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
      console.error(
        `round ${r + 1} ${side.name}: long-poll ${lp.cpuUsPerEvent.toFixed(2)} µs/event (${Math.round(lp.eventsPerSec)} events/s, ${Math.round(lp.requestsPerSec)} req/s, ${lp.runsPerSec.toFixed(2)} runs/s), SSE ${sse.cpuUsPerEvent.toFixed(2)} µs/event (${Math.round(sse.eventsPerSec)} events/s)`,
      );
    }
  }
} finally {
  for (const side of sides) await side.gw.stop();
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`load average ${load0.toFixed(2)} → ${loadavg()[0].toFixed(2)}, Node ${process.version}`);
for (const side of sides) {
  const lp = median(side.lp);
  const sse = median(side.sse);
  console.log(
    `${side.name}: long-poll ${lp.toFixed(2)} µs CPU/event, SSE ${sse.toFixed(2)}: ${(lp / sse).toFixed(2)}× (target ≤ 1.5×)`,
  );
}
