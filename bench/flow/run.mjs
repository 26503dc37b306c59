// Workload "4-step flow": transform -> event (Map read) -> condition -> success behind HTTP.
// sagaway (`sagaway start`), Node-RED 4.1 (change -> function -> switch -> function), and
// moleculer-web + Moleculer 0.14 with the same logic in code (flow.run calls items.get).
import { compareHttp, startEach } from '../lib/compare.mjs';
import { nodeRed, peerScript, sagawayStart } from '../lib/servers.mjs';

/** Rows of the suite table for this workload. */
export async function flow(opts) {
  const servers = [];
  const notes = [];
  try {
    const s = await startEach(
      {
        sagaway: () => sagawayStart('bench/flow/sagaway.yaml'),
        'moleculer-web': () => peerScript('moleculer-web.mjs', '/items/2', { env: { WORKLOAD: 'flow' } }),
        'Node-RED': () => nodeRed('flow.json', '/items/2'),
      },
      servers,
      notes,
    );
    const path = (name) => (name === 'sagaway' ? '/api/request/items/42' : '/items/42');
    const r = await compareHttp(
      Object.entries(s).map(([name, srv]) => ({ name, pids: [srv.pid], url: `${srv.base}${path(name)}` })),
      opts,
    );
    const rows = ['moleculer-web', 'Node-RED']
      .filter((peer) => r[peer])
      .map((peer) => ({
        workload: '4-step flow (transform, event, condition, success)',
        metric: 'req/s',
        sagaway: r.sagaway.rps,
        peer,
        peerValue: r[peer].rps,
        ratio: r.sagaway.rps / r[peer].rps,
        // issue 10: the same four steps at least as fast as Moleculer with the logic in code
        target: peer === 'moleculer-web' ? 1 : undefined,
        detail: `CPU/req ${r.sagaway.cpuUs.toFixed(0)} vs ${r[peer].cpuUs.toFixed(0)} µs; p99 ${r.sagaway.p99} vs ${r[peer].p99} ms`,
      }));
    return { rows, notes };
  } finally {
    await Promise.all(servers.map((x) => x.stop()));
  }
}
