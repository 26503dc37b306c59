#!/usr/bin/env node
// Long-poll load generator (issue 25), in its own process: N clients, each a loop of
// GET URL?live=long-poll&offset=…&cursor=… on its own keep-alive connection, as
// docs/streams.md#long-poll describes. Prints {"phase":"measuring"} after the warm-up, then
// {"clients","requests","events","perSec","statuses"} for --seconds.
// HTTP/1.1 by hand over node:net (status line, four headers, Content-Length or chunked), not
// node:http: at 10,000 clients node:http's parser and agent took the whole core of this process
// (about 5,000 clients were ever connected and the run never reached its measuring phase), so the
// load generator, not the servers, was measured. Connections come from 127.0.0.1–127.0.0.8 so
// ephemeral ports are never short, and open at most --connecting at a time (nginx's listen
// backlog drops a burst of SYNs, and a dropped SYN is retried only after 1 s, 3 s, 7 s…).
/* global performance, Buffer */
import { connect } from 'node:net';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    n: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '2' },
    connecting: { type: 'string', default: '200' },
  },
});
const n = Number(values.n);
const base = new URL(values.url);
const target = base.pathname + (base.search ? base.search + '&' : '?') + 'live=long-poll';
const host = base.hostname;
const port = Number(base.port || 80);
let counting = false;
let events = 0;
let requests = 0;
let connected = 0;
let stopped = false;
const statuses = {};
const SEQ = Buffer.from('"seq":');
const CRLF2 = Buffer.from('\r\n\r\n');
const CHUNK_END = Buffer.from('\r\n0\r\n\r\n');

/** The value of header `name` (lower case, with its colon) in the head, or undefined. */
function header(head, name) {
  const i = head.lower.indexOf('\r\n' + name);
  if (i < 0) return undefined;
  const from = i + 2 + name.length;
  const to = head.text.indexOf('\r\n', from);
  return head.text.slice(from, to < 0 ? undefined : to).trim();
}

/** One client: a connection, reopened when it closes, and its position in the feed. */
function client(i, ready) {
  let offset;
  let cursor;
  let sock;
  let buf = Buffer.alloc(0);
  let first = true;
  const send = () => {
    if (stopped) return;
    let path = target;
    if (offset) path += '&offset=' + encodeURIComponent(offset);
    if (cursor) path += '&cursor=' + cursor;
    sock.write(`GET ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\n\r\n`);
  };
  const open = () => {
    buf = Buffer.alloc(0);
    sock = connect({ host, port, localAddress: `127.0.0.${1 + (i % Number(process.env.LP_SOURCES ?? 8))}` });
    sock.setNoDelay(true);
    sock.on('connect', () => {
      connected++;
      if (first) {
        first = false;
        ready();
      }
      send();
    });
    sock.on('data', (d) => {
      buf = buf.length ? Buffer.concat([buf, d]) : d;
      for (;;) {
        const h = buf.indexOf(CRLF2);
        if (h < 0) return;
        const text = buf.toString('latin1', 0, h);
        const head = { text, lower: text.toLowerCase() };
        const status = Number(text.slice(9, 12));
        const length = header(head, 'content-length:');
        let end;
        if (length !== undefined) end = h + 4 + Number(length);
        else if (header(head, 'transfer-encoding:') === 'chunked') {
          const e = buf.indexOf(CHUNK_END, h + 4 - 2);
          if (e < 0) return;
          end = e + CHUNK_END.length;
        } else end = h + 4;
        if (buf.length < end) return;
        const body = buf.subarray(h + 4, end);
        buf = buf.subarray(end);
        answered(status, head, body);
      }
    });
    sock.on('error', () => {});
    sock.on('close', () => {
      connected--;
      if (first) {
        first = false;
        ready();
      }
      if (!stopped) setTimeout(open, 100);
    });
  };
  const answered = (status, head, body) => {
    if (counting) {
      requests++;
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
    if (status === 200) {
      // count the entries without parsing the body (the backend's entries are {"seq":…,"t":…}),
      // so the client stays cheap and the servers are measured
      if (counting) for (let j = body.indexOf(SEQ); j >= 0; j = body.indexOf(SEQ, j + 6)) events++;
      offset = header(head, 'stream-next-offset:');
      if (header(head, 'stream-closed:') === 'true') return sock.end();
    } else if (status === 204 || status === 304) {
      offset = header(head, 'stream-next-offset:') ?? offset;
    } else {
      cursor = undefined;
      return setTimeout(send, 500);
    }
    cursor = header(head, 'stream-cursor:');
    send();
  };
  open();
}

// at most --connecting connections opening at a time, as browsers arriving would
const t0 = performance.now();
let next = 0;
let opening = 0;
await new Promise((resolve) => {
  const more = () => {
    while (next < n && opening < Number(values.connecting)) {
      opening++;
      client(next++, () => {
        opening--;
        if (next < n) more();
        else if (opening === 0) resolve();
      });
    }
  };
  more();
});
const rampMs = performance.now() - t0;
await new Promise((r) => setTimeout(r, Number(values.warmup) * 1000));
console.log(JSON.stringify({ phase: 'measuring', connected, rampMs: Math.round(rampMs) }));
counting = true;
const t1 = performance.now();
await new Promise((r) => setTimeout(r, Number(values.seconds) * 1000));
counting = false;
const secs = (performance.now() - t1) / 1000;
stopped = true;
console.log(
  JSON.stringify({
    clients: n,
    connected,
    rampMs: Math.round(rampMs),
    requests,
    events,
    perSec: events / secs,
    requestsPerSec: requests / secs,
    statuses,
  }),
);
process.exit(0);
