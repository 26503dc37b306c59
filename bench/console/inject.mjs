#!/usr/bin/env node
/* global performance */
// What the console costs per request, without sockets or a load generator (which on a shared
// machine move far more than the console could): the one-shot workload of bench/oneshot through
// fastify's inject, in one process, with the console off, on (nobody watching) and watched (a
// feed listening), in finely interleaved batches so that all three see the same machine state.
//   npm run build && node bench/console/inject.mjs [--batches 30] [--size 500]
import { parseArgs } from 'node:util';
import { silentLogger } from '../../dist/src/core/logger.js';
import { createGateway } from '../../dist/src/gateway/server.js';
import { loadTestHost } from '../../dist/src/testing/index.js';

const { values } = parseArgs({
  options: { batches: { type: 'string', default: '30' }, size: { type: 'string', default: '500' } },
});
const batches = Number(values.batches);
const size = Number(values.size);

async function target(file, watched) {
  const h = await loadTestHost(new URL(file, import.meta.url), { log: silentLogger() });
  const gw = await createGateway({
    settings: h.settings,
    service: h.host,
    log: silentLogger(),
    traces: [h.host.traces],
  });
  // A watcher as an open console page would be: the feed's own listener on the host's traces.
  const stop = watched ? h.host.traces.listen(() => undefined) : () => undefined;
  return {
    async batch() {
      const started = performance.now();
      for (let i = 0; i < size; i++) {
        const res = await gw.app.inject({ method: 'GET', url: '/api/request/items/42' });
        if (res.statusCode !== 200) throw new Error(`answered ${res.statusCode}`);
      }
      return ((performance.now() - started) * 1000) / size;
    },
    async close() {
      stop();
      await gw.close();
      await h.close();
    },
  };
}

const targets = {
  'console off': await target('./off.yaml', false),
  'console on': await target('../oneshot/sagaway.yaml', false),
  'console watched': await target('../oneshot/sagaway.yaml', true),
};
const times = Object.fromEntries(Object.keys(targets).map((k) => [k, []]));
try {
  for (const t of Object.values(targets)) await t.batch(); // warm-up
  // The order rotates every batch, so that no target always runs first (or right after another).
  const order = Object.keys(targets);
  for (let b = 0; b < batches; b++) {
    for (let i = 0; i < order.length; i++) {
      const name = order[(b + i) % order.length];
      times[name].push(await targets[name].batch());
    }
  }
} finally {
  for (const t of Object.values(targets)) await t.close();
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const off = median(times['console off']);
console.log('target            µs/request (median of batches)  vs off');
for (const [name, xs] of Object.entries(times)) {
  const m = median(xs);
  console.log(`${name.padEnd(18)}${m.toFixed(1).padStart(12)}${(m / off).toFixed(3).padStart(26)}`);
}
