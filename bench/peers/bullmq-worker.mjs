#!/usr/bin/env node
// Peer "BullMQ flow", worker side: the child job reads the item from the shared Map, the parent
// job answers its child's value. Concurrency 50 per queue, the load generator's connections.
//   REDIS_URL=redis://127.0.0.1:6379 QUEUE_PREFIX=x node bench/peers/bullmq-worker.mjs
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { items } from '../lib/items.cjs';

const prefix = process.env.QUEUE_PREFIX ?? 'sagawaybench';
const connection = () => new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
const concurrency = Number(process.env.CONCURRENCY ?? 50);
const child = new Worker('child', async (job) => items.get(String(job.data.id)) ?? null, {
  connection: connection(),
  prefix,
  concurrency,
});
const parent = new Worker('parent', async (job) => Object.values(await job.getChildrenValues())[0] ?? null, {
  connection: connection(),
  prefix,
  concurrency,
});
await Promise.all([child.waitUntilReady(), parent.waitUntilReady()]);
console.log('ready');
for (const s of ['SIGINT', 'SIGTERM'])
  process.once(s, () => Promise.all([child.close(), parent.close()]).then(() => process.exit(0)));
