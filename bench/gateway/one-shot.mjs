#!/usr/bin/env node
// One-shot requests per second: /api/request/items/:id (gateway -> saga -> local event step
// reading a Map) versus a bare fastify route doing the same read. Servers run in their own
// processes; autocannon drives them alternately, so both see the same machine state.
//   npm run build && node bench/gateway/one-shot.mjs [--seconds 5] [--rounds 3] [--connections 50]
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { startServer } from './spawn.mjs';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '50' },
  },
});
const duration = Number(values.seconds);
const connections = Number(values.connections);

const sagaway = await startServer('sagaway');
const gatewayOnly = await startServer('gateway');
const bare = await startServer('bare');

// Requests per second depend on whatever else the machine is doing; CPU time per request, read
// from the server process itself, is the steadier figure, so both are reported.
async function run(server, path) {
  const cpu0 = await server.cpu();
  const r = await autocannon({ url: `http://127.0.0.1:${server.port}${path}`, connections, duration, pipelining: 1 });
  const cpu1 = await server.cpu();
  if (r.non2xx || r.errors) throw new Error(`${path}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { rps: r.requests.average, p99: r.latency.p99, cpuUs: (cpu1 - cpu0) / r.requests.total };
}

// Warm up both (JIT, caches).
await run(sagaway, '/api/request/items/2');
await run(gatewayOnly, '/api/request/items/2');
await run(bare, '/items/2');
const results = [];
for (let i = 0; i < Number(values.rounds); i++) {
  const s = await run(sagaway, '/api/request/items/2');
  const g = await run(gatewayOnly, '/api/request/items/2');
  const b = await run(bare, '/items/2');
  results.push({
    round: i + 1,
    sagawayRps: Math.round(s.rps),
    gatewayOnlyRps: Math.round(g.rps),
    bareRps: Math.round(b.rps),
    ratio: +(s.rps / b.rps).toFixed(3),
    gatewayOnlyRatio: +(g.rps / b.rps).toFixed(3),
    sagawayCpuUs: +s.cpuUs.toFixed(1),
    gatewayOnlyCpuUs: +g.cpuUs.toFixed(1),
    bareCpuUs: +b.cpuUs.toFixed(1),
    sagawayP99ms: s.p99,
    bareP99ms: b.p99,
  });
}
console.table(results);
const avg = (k) => results.reduce((a, r) => a + r[k], 0) / results.length;
console.log(
  JSON.stringify({
    bench: 'one-shot',
    node: process.version,
    connections,
    seconds: duration,
    sagawayRps: Math.round(avg('sagawayRps')),
    gatewayOnlyRps: Math.round(avg('gatewayOnlyRps')),
    bareRps: Math.round(avg('bareRps')),
    ratio: +(avg('sagawayRps') / avg('bareRps')).toFixed(3),
    gatewayOnlyRatio: +(avg('gatewayOnlyRps') / avg('bareRps')).toFixed(3),
    cpuUsPerRequest: {
      sagaway: +avg('sagawayCpuUs').toFixed(1),
      gatewayOnly: +avg('gatewayOnlyCpuUs').toFixed(1),
      bare: +avg('bareCpuUs').toFixed(1),
    },
  }),
);
sagaway.stop();
gatewayOnly.stop();
bare.stop();
