#!/usr/bin/env node
// Peer "BullMQ flow", HTTP side: GET /items/:id adds a flow (a parent job whose one child job
// reads the item, bullmq-worker.mjs runs both in another process) on the local Redis and answers
// with the parent's result once it has finished. fastify 5 (the root's), logger off.
//   PORT=N REDIS_URL=redis://127.0.0.1:6379 QUEUE_PREFIX=x node bench/peers/bullmq-api.mjs
import Fastify from 'fastify';
import { FlowProducer, Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';

const prefix = process.env.QUEUE_PREFIX ?? 'sagawaybench';
const connection = () => new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
const flows = new FlowProducer({ connection: connection(), prefix });
const events = new QueueEvents('parent', { connection: connection(), prefix });
// Every request in flight waits on these: 50 listeners are expected, not a leak.
flows.setMaxListeners(0);
events.setMaxListeners(0);
await events.waitUntilReady();
const keep = { removeOnComplete: 1000, removeOnFail: 1000 };

const app = Fastify({ logger: false });
app.get('/items/:id', async (request, reply) => {
  const { job } = await flows.add({
    name: 'get-item',
    queueName: 'parent',
    opts: keep,
    children: [{ name: 'read', queueName: 'child', data: { id: request.params.id }, opts: keep }],
  });
  const item = await job.waitUntilFinished(events, 10_000);
  if (!item) return reply.code(404).send({ code: 'RECORD_NOT_FOUND' });
  return item;
});
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });

// Leave nothing behind in the shared Redis.
async function stop() {
  await app.close();
  for (const name of ['parent', 'child']) {
    const q = new Queue(name, { connection: connection(), prefix });
    await q.obliterate({ force: true }).catch(() => undefined);
    await q.close();
  }
  process.exit(0);
}
for (const s of ['SIGINT', 'SIGTERM']) process.once(s, stop);
