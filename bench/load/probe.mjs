#!/usr/bin/env node
// Sends GET URL every INTERVAL ms, one at a time, on its own connection, from its own process
// (so that the load generator's event loop never delays a probe), until SIGTERM; then prints
// one JSON line: { n, p50, p99, max, over } with latencies in ms.
//   node bench/load/probe.mjs URL [INTERVAL]
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';

const [url, every = '10'] = process.argv.slice(2);
const agent = new Agent({ connections: 1 });
const lat = [];
let stop = false;
process.once('SIGTERM', () => (stop = true));
while (!stop) {
  const t = performance.now();
  try {
    const r = await request(url, { dispatcher: agent });
    await r.body.dump();
  } catch {
    // counted by its time like any other answer
  }
  lat.push(performance.now() - t);
  await new Promise((r) => setTimeout(r, Number(every)));
}
lat.sort((a, b) => a - b);
const at = (q) => lat[Math.min(lat.length - 1, Math.floor(lat.length * q))] ?? NaN;
const r1 = (v) => Math.round(v * 10) / 10;
process.stdout.write(
  `${JSON.stringify({ n: lat.length, p50: r1(at(0.5)), p99: r1(at(0.99)), max: r1(lat.at(-1) ?? NaN), over50: lat.filter((v) => v > 50).length })}\n`,
);
await agent.close();
