#!/usr/bin/env node
// How many idle streams one gateway process holds: opens N streams on a saga that answers
// `{ list: [], continue: true, wait: "5m" }`, then measures the server's memory per stream
// (after a full GC, before vs after) and whether the `: ping` heartbeats arrive on time.
//   npm run build && node bench/gateway/idle-streams.mjs [--streams 10000] [--heartbeat 5]
import { performance } from 'node:perf_hooks';
import { connect } from 'node:net';
import { parseArgs } from 'node:util';
import { startServer } from './spawn.mjs';

const { values } = parseArgs({
  options: { streams: { type: 'string', default: '10000' }, heartbeat: { type: 'string', default: '5' } },
});
const n = Number(values.streams);
const heartbeatMs = Number(values.heartbeat) * 1000;
const server = await startServer('sagaway', { BENCH_HEARTBEAT: `${heartbeatMs}ms` });
const before = await server.memory();

const sockets = [];
const pings = []; // per socket: arrival times of pings
function open(i) {
  return new Promise((resolve, reject) => {
    const s = connect(server.port, '127.0.0.1', () =>
      s.write('GET /api/stream/idle HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n\r\n'),
    );
    pings[i] = [];
    let first = true;
    s.setEncoding('utf8');
    s.on('data', (chunk) => {
      if (first) {
        first = false;
        if (!chunk.startsWith('HTTP/1.1 200')) reject(new Error(`stream ${i}: ${chunk.split('\r\n')[0]}`));
        resolve();
      }
      let at = chunk.indexOf(': ping');
      while (at >= 0) {
        pings[i].push(performance.now());
        at = chunk.indexOf(': ping', at + 1);
      }
    });
    s.on('error', reject);
    sockets.push(s);
  });
}
const t0 = performance.now();
for (let i = 0; i < n; i += 500) {
  await Promise.all(Array.from({ length: Math.min(500, n - i) }, (_, j) => open(i + j)));
}
const openSeconds = (performance.now() - t0) / 1000;
// Let every stream make its first (and only) poll and settle, then watch heartbeats.
const watchFrom = performance.now() + 1000;
await new Promise((r) => setTimeout(r, 1000 + heartbeatMs * 3));
const after = await server.memory();

let maxGap = 0;
const gaps = [];
let missing = 0;
for (const times of pings) {
  const seen = times.filter((t) => t >= watchFrom);
  if (seen.length < 2) missing++;
  for (let k = 1; k < seen.length; k++) gaps.push(seen[k] - seen[k - 1]);
}
gaps.sort((a, b) => a - b);
for (const g of gaps) maxGap = Math.max(maxGap, g);
const p99 = gaps[Math.floor(gaps.length * 0.99)] ?? NaN;
const result = {
  bench: 'idle-streams',
  node: process.version,
  streams: n,
  openSeconds: +openSeconds.toFixed(1),
  heartbeatMs,
  pingGapP99Ms: Math.round(p99),
  pingGapMaxMs: Math.round(maxGap),
  streamsWithoutTwoPings: missing,
  rssPerStreamKB: +((after.rss - before.rss) / n / 1024).toFixed(2),
  heapPerStreamKB: +((after.heapUsed - before.heapUsed) / n / 1024).toFixed(2),
  serverRssMB: Math.round(after.rss / 1048576),
};
console.log(JSON.stringify(result));
for (const s of sockets) s.destroy();
server.stop();
