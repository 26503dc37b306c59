// Workload "4-step flow": transform -> event (Map read) -> condition -> success behind HTTP.
// sagaway (`sagaway start`), Node-RED 4.1 (change -> function -> switch -> function), and
// moleculer-web + Moleculer 0.14 with the same logic in code (flow.run calls items.get).
import { compareHttp } from '../lib/compare.mjs';
import { nodeRed, peerScript, sagawayStart } from '../lib/servers.mjs';

/** Rows of the suite table for this workload. */
export async function flow(opts) {
  const servers = [];
  try {
    const sagaway = await sagawayStart('bench/flow/sagaway.yaml');
    servers.push(sagaway);
    const moleculer = await peerScript('moleculer-web.mjs', '/items/2', { env: { WORKLOAD: 'flow' } });
    servers.push(moleculer);
    const red = await nodeRed('flow.json', '/items/2');
    servers.push(red);
    const r = await compareHttp(
      [
        { name: 'sagaway', pids: [sagaway.pid], url: `${sagaway.base}/api/request/items/42` },
        { name: 'moleculer-web', pids: [moleculer.pid], url: `${moleculer.base}/items/42` },
        { name: 'Node-RED', pids: [red.pid], url: `${red.base}/items/42` },
      ],
      opts,
    );
    return ['moleculer-web', 'Node-RED'].map((peer) => ({
      workload: '4-step flow (transform, event, condition, success)',
      metric: 'req/s',
      sagaway: r.sagaway.rps,
      peer,
      peerValue: r[peer].rps,
      ratio: r.sagaway.rps / r[peer].rps,
      target: undefined,
      detail: `CPU/req ${r.sagaway.cpuUs.toFixed(0)} vs ${r[peer].cpuUs.toFixed(0)} µs; p99 ${r.sagaway.p99} vs ${r[peer].p99} ms`,
    }));
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}
