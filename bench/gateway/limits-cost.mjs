#!/usr/bin/env node
// What the hardening limits cost on the one-shot request: the same saga served by two sagaway
// processes side by side, one with the default limits (rate limit counted but never reached,
// response budget, timeouts, connection cap) and one with every optional limit off
// (sagaway-nolimits.yaml). autocannon drives them alternately, so both see the same machine.
//   npm run build && node bench/gateway/limits-cost.mjs [--seconds 5] [--rounds 5] [--connections 50]
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { startServer } from './spawn.mjs';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '50' },
  },
});
const duration = Number(values.seconds);
const connections = Number(values.connections);
const path = '/api/request/items/2';

const limited = await startServer('sagaway');
const unlimited = await startServer('sagaway', { BENCH_CONFIG: 'sagaway-nolimits.yaml' });

async function run(server) {
  const cpu0 = await server.cpu();
  const r = await autocannon({ url: `http://127.0.0.1:${server.port}${path}`, connections, duration });
  const cpu1 = await server.cpu();
  if (r.non2xx || r.errors) throw new Error(`${r.non2xx} non-2xx, ${r.errors} errors`);
  return { rps: r.requests.average, cpuUs: (cpu1 - cpu0) / r.requests.total };
}

await run(limited);
await run(unlimited);
const rows = [];
for (let i = 0; i < Number(values.rounds); i++) {
  // Alternate which goes first, so neither always follows the other's garbage.
  const [a, b] =
    i % 2 ? [await run(unlimited), await run(limited)].reverse() : [await run(limited), await run(unlimited)];
  rows.push({
    round: i + 1,
    limitsRps: Math.round(a.rps),
    noLimitsRps: Math.round(b.rps),
    limitsCpuUs: +a.cpuUs.toFixed(1),
    noLimitsCpuUs: +b.cpuUs.toFixed(1),
    cpuRatio: +(a.cpuUs / b.cpuUs).toFixed(3),
  });
}
console.table(rows);
const median = (k) => rows.map((r) => r[k]).sort((x, y) => x - y)[Math.floor(rows.length / 2)];
console.log(
  JSON.stringify({
    bench: 'limits-cost',
    node: process.version,
    connections,
    seconds: duration,
    medianCpuUsPerRequest: { limits: median('limitsCpuUs'), noLimits: median('noLimitsCpuUs') },
    medianCpuRatio: median('cpuRatio'),
    medianRps: { limits: median('limitsRps'), noLimits: median('noLimitsRps') },
  }),
);
limited.stop();
unlimited.stop();
