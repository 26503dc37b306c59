#!/usr/bin/env node
// Peer "@fastify/sse" (0.6, fastify 5): the same three endpoints, backend calls and loop as
// sse-hand.mjs, written with the plugin's reply.sse API; heartbeat 15 s, logger off.
//   PORT=N node bench/peers/sse-fastify.mjs
/* global clearTimeout */
import Fastify from 'fastify';
import sse from '@fastify/sse';
import { counters, page, since } from '../sse/feed.mjs';

const app = Fastify({ logger: false });
await app.register(sse, { heartbeatInterval: 15_000 });

function stream(reply, poll, waitMs) {
  reply.sse.keepAlive();
  reply.sse.sendHeaders();
  reply.raw.flushHeaders(); // the plugin leaves them buffered until the first event
  let previous;
  let timer;
  let closed = false;
  reply.sse.onClose(() => {
    closed = true;
    clearTimeout(timer);
  });
  const tick = async () => {
    if (closed) return;
    const { list, next, wait } = poll(previous);
    previous = next;
    // One send per entry is how the plugin is used; it awaits backpressure itself.
    for (const entry of list) await reply.sse.send({ id: String(next), data: entry });
    if (!closed) timer = setTimeout(tick, wait ?? waitMs);
  };
  tick();
}

app.get('/feed', { sse: 'only' }, async (request, reply) => stream(reply, (p) => page(p, request.query.start), 0));
app.get('/changes', { sse: 'only' }, async (request, reply) => stream(reply, since, Number(request.query.wait ?? 50)));
app.get('/idle', { sse: 'only' }, async (request, reply) => stream(reply, () => ({ list: [] }), 300_000));
app.get('/stats', async () => counters);
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
for (const s of ['SIGINT', 'SIGTERM']) process.once(s, () => process.exit(0));
