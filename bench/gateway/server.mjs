#!/usr/bin/env node
// A benchmark server in its own process: `node server.mjs sagaway|bare|sse`. Prints
// {"port":N} on stdout when listening; answers IPC messages "memory" and "cpu".
//   sagaway  the real gateway + embedded runner on sagaway.yaml
//   gateway  the gateway alone, in front of a service doing the same Map read (no engine)
//   bare     a bare fastify route doing the same Map read as the saga's event step
//   sse      a minimal hand-written Node SSE server sending the same feed entries
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { loadConfig } from '../../dist/src/config/load.js';
import { silentLogger } from '../../dist/src/core/logger.js';
import { createGateway } from '../../dist/src/gateway/server.js';
import { BUILTIN_HANDLERS } from '../../dist/src/handlers/index.js';
import { Host } from '../../dist/src/runner/host.js';
import { createState } from '../../dist/src/states/index.js';
import { createCluster } from '../../dist/src/systems/index.js';
import { items, PAGE } from './map-store.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const mode = process.argv[2];
let port;

if (mode === 'sagaway') {
  // BENCH_CONFIG picks another configuration beside this file (limits-cost.mjs compares two).
  const { settings } = await loadConfig(join(here, process.env.BENCH_CONFIG ?? 'sagaway.yaml'));
  const log = silentLogger();
  const host = await Host.start({ settings, log, builtins: BUILTIN_HANDLERS, createState, createCluster });
  const gateway = await createGateway({ settings, service: host, log });
  ({ port } = await gateway.listen(0, '127.0.0.1'));
} else if (mode === 'gateway') {
  // The gateway alone, in front of a SagaService that does the event step's Map read itself:
  // what the gateway adds, without the engine.
  const { settings } = await loadConfig(join(here, 'sagaway.yaml'));
  const service = {
    async run(_runner, req) {
      const item = items.get(req.path.slice('/items/'.length));
      return item
        ? { outcome: 'SUCCESS', http: 200, response: item }
        : { outcome: 'FAIL', http: 404, error: { code: 'RECORD_NOT_FOUND', message: 'no such item', http: 404 } };
    },
  };
  const gateway = await createGateway({ settings, service, log: silentLogger() });
  ({ port } = await gateway.listen(0, '127.0.0.1'));
} else if (mode === 'bare') {
  const app = Fastify({ logger: false });
  app.get('/items/:id', async (request, reply) => {
    const item = items.get(request.params.id);
    if (!item) return reply.code(404).send({ code: 'RECORD_NOT_FOUND' });
    return item;
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = app.server.address().port;
} else if (mode === 'sse') {
  // What a careful hand-written SSE endpoint does: headers, a batch, wait for drain, again.
  const payload = PAGE.map((e, i) => `id: ${i}\ndata: ${JSON.stringify(e)}\n\n`).join('');
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    let closed = false;
    res.on('close', () => (closed = true));
    const send = () => {
      if (closed) return;
      if (res.write(payload)) setTimeout(send, 1);
      else res.once('drain', () => setTimeout(send, 1));
    };
    send();
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  port = server.address().port;
} else {
  console.error('usage: server.mjs sagaway|gateway|bare|sse');
  process.exit(2);
}

process.on('message', (msg) => {
  if (msg === 'memory') {
    globalThis.gc?.();
    process.send({ memory: process.memoryUsage() });
  } else if (msg === 'cpu') {
    process.send({ cpu: process.cpuUsage() });
  } else if (msg === 'exit') {
    process.exit(0); // a clean exit, so that --cpu-prof writes its profile
  }
});
console.log(JSON.stringify({ port }));
