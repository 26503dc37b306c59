#!/usr/bin/env node
// Peer "bare fastify" (the limit for one-shot): the same Map read as sagaway's event step in a
// plain fastify 5 route, logger off. Uses the root's fastify, the one sagaway's gateway runs on.
//   PORT=N node bench/peers/fastify-bare.mjs
import Fastify from 'fastify';
import { items } from '../lib/items.cjs';

const app = Fastify({ logger: false });
app.get('/items/:id', async (request, reply) => {
  const item = items.get(request.params.id);
  if (!item) return reply.code(404).send({ code: 'RECORD_NOT_FOUND' });
  return item;
});
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
for (const s of ['SIGINT', 'SIGTERM']) process.once(s, () => app.close().then(() => process.exit(0)));
