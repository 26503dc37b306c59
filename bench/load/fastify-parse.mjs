#!/usr/bin/env node
// Peer "fastify JSON parse": fastify 5 (the root's, the one sagaway's gateway runs on) with its
// own default JSON parser and sagaway's default body limit; the route only answers that it
// parsed. What parsing a body costs before any work is done with it.
//   PORT=N node bench/load/fastify-parse.mjs
import Fastify from 'fastify';

const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
app.get('/healthz', async () => ({ ok: true }));
app.post('/parse', async (request) => ({ keys: Object.keys(request.body ?? {}).length }));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
for (const s of ['SIGINT', 'SIGTERM']) process.once(s, () => app.close().then(() => process.exit(0)));
