// Workload "one-shot API, one local step": GET /items/:id answered from a Map.
// sagaway (`sagaway start`), bare fastify (the limit), moleculer-web + Moleculer 0.14, Node-RED 4.1.
import { compareHttp } from '../lib/compare.mjs';
import { nodeRed, peerScript, sagawayStart } from '../lib/servers.mjs';

/** Rows of the suite table for this workload. */
export async function oneshot(opts) {
  const servers = [];
  try {
    const sagaway = await sagawayStart('bench/oneshot/sagaway.yaml');
    servers.push(sagaway);
    const fastify = await peerScript('fastify-bare.mjs', '/items/2');
    servers.push(fastify);
    const moleculer = await peerScript('moleculer-web.mjs', '/items/2', { env: { WORKLOAD: 'oneshot' } });
    servers.push(moleculer);
    const red = await nodeRed('oneshot.json', '/items/2');
    servers.push(red);
    const r = await compareHttp(
      [
        { name: 'sagaway', pids: [sagaway.pid], url: `${sagaway.base}/api/request/items/42` },
        { name: 'bare fastify', pids: [fastify.pid], url: `${fastify.base}/items/42` },
        { name: 'moleculer-web', pids: [moleculer.pid], url: `${moleculer.base}/items/42` },
        { name: 'Node-RED', pids: [red.pid], url: `${red.base}/items/42` },
      ],
      opts,
    );
    const targets = { 'bare fastify': 0.8, 'moleculer-web': 1.5, 'Node-RED': 3 };
    return Object.entries(targets).map(([peer, target]) => ({
      workload: 'one-shot API, one local step',
      metric: 'req/s',
      sagaway: r.sagaway.rps,
      peer,
      peerValue: r[peer].rps,
      ratio: r.sagaway.rps / r[peer].rps,
      target,
      detail: `CPU/req ${r.sagaway.cpuUs.toFixed(0)} vs ${r[peer].cpuUs.toFixed(0)} µs; p99 ${r.sagaway.p99} vs ${r[peer].p99} ms`,
    }));
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}
