#!/usr/bin/env node
// Long-poll load generator (issue 25), in its own process: N clients, each a loop of
// GET URL?live=long-poll&offset=…&cursor=… over keep-alive connections (node:http, one socket
// per client), as docs/streams.md#long-poll describes. Prints {"phase":"measuring"} after the
// warm-up, then {"clients","requests","events","perSec","statuses"} for --seconds.
/* global performance, Buffer */
import { Agent, get } from 'node:http';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    n: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '2' },
  },
});
const n = Number(values.n);
const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
let counting = false;
let events = 0;
let requests = 0;
let stopped = false;
const statuses = {};
const SEQ = Buffer.from('"seq":');

function once(path) {
  return new Promise((resolve, reject) => {
    const req = get(path, { agent }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ res, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(120_000, () => req.destroy(new Error('timeout')));
  });
}

async function loop() {
  const base = new URL(values.url);
  let offset;
  let cursor;
  while (!stopped) {
    const u = new URL(base);
    u.searchParams.set('live', 'long-poll');
    if (offset) u.searchParams.set('offset', offset);
    if (cursor) u.searchParams.set('cursor', cursor);
    let r;
    try {
      r = await once(u);
    } catch {
      await new Promise((res) => setTimeout(res, 100));
      continue;
    }
    const { res, body } = r;
    if (counting) {
      requests++;
      statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
    }
    if (res.statusCode === 200) {
      // the offset and the end are headers too: count the entries without parsing the body (the
      // backend's entries are {"seq":…,"t":…}), so the client stays cheap and the servers are measured
      if (counting) for (let i = body.indexOf(SEQ); i >= 0; i = body.indexOf(SEQ, i + 6)) events++;
      offset = res.headers['stream-next-offset'];
      if (res.headers['stream-closed'] === 'true') return;
    } else if (res.statusCode === 204) {
      offset = res.headers['stream-next-offset'] ?? offset;
    } else {
      await new Promise((res2) => setTimeout(res2, 500));
    }
    cursor = res.headers['stream-cursor'];
  }
}

const loops = [];
// start the clients over a second, as browsers arriving would
for (let i = 0; i < n; i++) {
  loops.push(loop());
  if (i % 100 === 99) await new Promise((r) => setTimeout(r, 1000 / (n / 100)));
}
await new Promise((r) => setTimeout(r, Number(values.warmup) * 1000));
console.log(JSON.stringify({ phase: 'measuring' }));
counting = true;
const t0 = performance.now();
await new Promise((r) => setTimeout(r, Number(values.seconds) * 1000));
counting = false;
const secs = (performance.now() - t0) / 1000;
stopped = true;
console.log(
  JSON.stringify({ clients: n, requests, events, perSec: events / secs, requestsPerSec: requests / secs, statuses }),
);
process.exit(0);
