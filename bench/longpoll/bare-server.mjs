#!/usr/bin/env node
// The floor of the long-poll form on Node (issue 25): a plain node:http server speaking the same
// protocol to bench/longpoll/clients.mjs with nothing else: every request is held until the next
// 1 s tick (one timer for all), then answered with one batch prebuilt for that tick (the changes
// of bench/sse/feed.mjs since the last tick, ~10, in sagaway's body format) and the headers a
// sagaway answer carries (cache-control, stream-next-offset, etag, content-type, x-request-id,
// x-content-type-options). No routing, auth, offset check or logging: what Node's HTTP server,
// its parser, ServerResponse and the socket write cost per request. PORT from the environment.
//   GET /healthz            200
//   GET /<anything>         held until the tick, then 200 with the tick's batch
/* global Buffer */
import { createServer } from 'node:http';
import { since } from '../sse/feed.mjs';

let previous;
let held = [];
let n = 0;
function tick() {
  const r = since(previous);
  previous = r.next ?? previous;
  const offset = `o${Date.now()}`;
  const body = Buffer.from(
    `{"list":[${r.list.map((e) => JSON.stringify(e)).join(',')}],"offset":${JSON.stringify(offset)},"end":false}`,
  );
  const head = {
    'cache-control': 'public, max-age=1, stale-while-revalidate=5',
    'stream-next-offset': offset,
    etag: `"${offset}"`,
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(body.length),
    'x-content-type-options': 'nosniff',
  };
  const now = held;
  held = [];
  for (const res of now) {
    res.writeHead(200, { ...head, 'x-request-id': String(++n) });
    res.end(body);
  }
  setTimeout(tick, 1000 - (Date.now() % 1000));
}
since(undefined);
setTimeout(tick, 1000 - (Date.now() % 1000));
const server = createServer((req, res) => {
  if (req.url === '/healthz') return res.end('ok');
  held.push(res);
});
server.keepAliveTimeout = 120_000;
server.listen(Number(process.env.PORT), '127.0.0.1');
