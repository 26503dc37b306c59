// Workload "one-shot API, one local step": GET /items/:id answered from a Map.
// sagaway (`sagaway start`), bare fastify (the limit), moleculer-web + Moleculer 0.14, Node-RED 4.1.
import { compareHttp, startEach } from '../lib/compare.mjs';
import { nodeRed, peerScript, sagawayStart } from '../lib/servers.mjs';

// issue 10: at least half of bare fastify's req/s (CPU per request at most 2x), 1.2x moleculer-web
const TARGETS = { 'bare fastify': 0.5, 'moleculer-web': 1.2, 'Node-RED': 3 };
const MB = 1024 * 1024;

/** Rows of the suite table for this workload. */
export async function oneshot(opts) {
  const servers = [];
  const notes = [];
  try {
    const s = await startEach(
      {
        sagaway: () => sagawayStart('bench/oneshot/sagaway.yaml'),
        'bare fastify': () => peerScript('fastify-bare.mjs', '/items/2'),
        'moleculer-web': () => peerScript('moleculer-web.mjs', '/items/2', { env: { WORKLOAD: 'oneshot' } }),
        'Node-RED': () => nodeRed('oneshot.json', '/items/2'),
      },
      servers,
      notes,
    );
    const path = (name) => (name === 'sagaway' ? '/api/request/items/42' : '/items/42');
    const r = await compareHttp(
      Object.entries(s).map(([name, srv]) => ({ name, pids: [srv.pid], url: `${srv.base}${path(name)}` })),
      opts,
    );
    const rows = Object.entries(TARGETS)
      .filter(([peer]) => r[peer])
      .map(([peer, target]) => ({
        workload: 'one-shot API, one local step',
        metric: 'req/s',
        sagaway: r.sagaway.rps,
        peer,
        peerValue: r[peer].rps,
        ratio: r.sagaway.rps / r[peer].rps,
        target,
        detail: `CPU/req ${r.sagaway.cpuUs.toFixed(0)} vs ${r[peer].cpuUs.toFixed(0)} µs; p99 ${r.sagaway.p99} vs ${r[peer].p99} ms`,
      }));
    // The steady figures of issue 10 against bare fastify: CPU per request (at most 2x) and peak
    // RSS (at most 1.5x); ratios are fastify's ÷ sagaway's, so above the target is better.
    const bare = r['bare fastify'];
    if (bare) {
      rows.push(
        {
          workload: 'one-shot API, one local step',
          metric: 'CPU µs/req',
          sagaway: Math.round(r.sagaway.cpuUs),
          peer: 'bare fastify',
          peerValue: Math.round(bare.cpuUs),
          ratio: bare.cpuUs / r.sagaway.cpuUs,
          target: 0.5,
          detail: 'user + system time of the server process per request (median round)',
        },
        {
          workload: 'one-shot API, one local step',
          metric: 'peak RSS MiB',
          sagaway: Math.round(r.sagaway.peakRss / MB),
          peer: 'bare fastify',
          peerValue: Math.round(bare.peakRss / MB),
          ratio: bare.peakRss / r.sagaway.peakRss,
          target: 0.67,
          detail: 'VmHWM of the server process after the rounds',
        },
      );
    }
    return { rows, notes };
  } finally {
    await Promise.all(servers.map((x) => x.stop()));
  }
}
