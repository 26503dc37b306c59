// Workload "one-shot API, one local step": GET /items/:id answered from a Map.
// sagaway (`sagaway start`), bare fastify (the limit), moleculer-web + Moleculer 0.14, Node-RED 4.1.
import { compareHttp, startEach } from '../lib/compare.mjs';
import { nodeRed, peerScript, sagawayStart } from '../lib/servers.mjs';

const TARGETS = { 'bare fastify': 0.8, 'moleculer-web': 1.5, 'Node-RED': 3 };

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
    return { rows, notes };
  } finally {
    await Promise.all(servers.map((x) => x.stop()));
  }
}
