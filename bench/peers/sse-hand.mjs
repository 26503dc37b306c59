#!/usr/bin/env node
// Peer "hand-written SSE server" (the limit): node:http, the same three endpoints and the same
// backend calls (bench/sse/feed.mjs) as sagaway's SSE sagas, the same loop: poll the backend,
// write one event per entry, wait for the socket to drain, wait, poll again. Heartbeat comment
// every 15 s of silence, as sagaway's default. GET /stats answers the backend call count.
//   PORT=N node bench/peers/sse-hand.mjs
/* global clearTimeout */
import { createServer } from 'node:http';
import { counters, page, since } from '../sse/feed.mjs';

const HEARTBEAT_MS = 15_000;
const HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
};

function stream(req, res, poll, waitMs) {
  res.writeHead(200, HEADERS);
  res.flushHeaders();
  let previous;
  let timer;
  let beat;
  let closed = false;
  const heartbeat = () => {
    clearTimeout(beat);
    beat = setTimeout(() => {
      res.write(': ping\n\n');
      heartbeat();
    }, HEARTBEAT_MS);
  };
  const tick = () => {
    if (closed) return;
    const { list, next, wait } = poll(previous);
    previous = next;
    let out = '';
    for (const entry of list) out += `id: ${next}\ndata: ${JSON.stringify(entry)}\n\n`;
    const again = () => (closed ? undefined : (timer = setTimeout(tick, wait ?? waitMs)));
    if (out === '') return again();
    heartbeat();
    if (res.write(out)) again();
    else res.once('drain', again);
  };
  res.on('close', () => {
    closed = true;
    clearTimeout(timer);
    clearTimeout(beat);
  });
  heartbeat();
  tick();
}

const server = createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  if (url.pathname === '/feed') return stream(req, res, (p) => page(p, url.searchParams.get('start')), 0);
  if (url.pathname === '/changes') return stream(req, res, since, Number(url.searchParams.get('wait') ?? 50));
  if (url.pathname === '/idle') return stream(req, res, () => ({ list: [] }), 300_000);
  if (url.pathname === '/stats') return res.end(JSON.stringify(counters));
  res.writeHead(404).end();
});
server.listen(Number(process.env.PORT), '127.0.0.1');
for (const s of ['SIGINT', 'SIGTERM']) process.once(s, () => process.exit(0));
