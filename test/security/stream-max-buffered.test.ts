import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { connect } from 'node:net';
import type { Gateway } from '../../src/gateway/server.js';
import { delay, ok, ScriptedService, startGateway } from '../gateway/harness.js';

/**
 * Issue 9 item 2: a stream whose client does not read holds at most `gateway.stream.maxBuffered`
 * bytes queued in the gateway. The loop stops polling, closes the stream after `stallTimeout`,
 * and the client, resuming from the last event it received, gets every entry exactly once.
 */

const PAD = 'x'.repeat(32 * 1024);
const EVENT = PAD.length + 200; // one event on the wire, with its id and framing
const MAX_BUFFERED = 256 * 1024;
const PAGE = 200; // 6.4 MB per poll: far more than the kernel's socket buffers take

/** Entries 0..total-1 in pages of PAGE; `next` is the index after the page. */
function bigFeed(total: number): ScriptedService {
  return new ScriptedService((req) => {
    const prev = req.input['previous'];
    const from = typeof prev === 'number' ? prev : 0;
    const to = Math.min(total, from + PAGE);
    const list = [];
    for (let i = from; i < to; i++) list.push({ n: i, pad: PAD });
    return ok({ list, next: to, continue: to < total, wait: 0 });
  });
}

/** Most bytes any stream response had queued right after one of its writes. */
function watchQueue(gw: Gateway): { max: number } {
  const seen = { max: 0 };
  gw.app.server.prependListener('request', (_req, res: ServerResponse) => {
    const write = res.write.bind(res) as (...a: unknown[]) => boolean;
    res.write = ((...args: unknown[]) => {
      const r = write(...args);
      seen.max = Math.max(seen.max, res.writableLength);
      return r;
    }) as typeof res.write;
  });
  return seen;
}

/** The body of a chunked response, as far as complete chunks go. */
function dechunk(raw: Buffer): string {
  const head = raw.indexOf('\r\n\r\n');
  let at = head + 4;
  const parts: Buffer[] = [];
  for (;;) {
    const eol = raw.indexOf('\r\n', at);
    if (eol < 0) break;
    const size = parseInt(raw.subarray(at, eol).toString('latin1'), 16);
    if (!(size > 0)) break;
    // a cut connection may end inside a chunk: keep what arrived, the SSE parser drops the partial event
    parts.push(raw.subarray(eol + 2, Math.min(raw.length, eol + 2 + size)));
    at = eol + 2 + size + 2;
    if (at > raw.length) break;
  }
  return Buffer.concat(parts).toString('utf8');
}

/** Complete SSE events of a body: entries (n and id) and the names of other events. */
function parse(body: string): { entries: Array<{ n: number; id: string }>; events: string[] } {
  const blocks = body.split('\n\n');
  blocks.pop(); // no blank line after it: not dispatched
  const entries: Array<{ n: number; id: string }> = [];
  const events: string[] = [];
  for (const block of blocks) {
    const fields = new Map<string, string>();
    for (const line of block.split('\n')) {
      const colon = line.indexOf(': ');
      if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 2));
    }
    if (fields.has('event')) events.push(fields.get('event')!);
    else if (fields.has('data'))
      entries.push({ n: (JSON.parse(fields.get('data')!) as { n: number }).n, id: fields.get('id')! });
  }
  return { entries, events };
}

async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await delay(5);
  }
}

test('a client that does not read: at most maxBuffered queued, no poll, closed; resuming loses and repeats nothing', async () => {
  const total = 3 * PAGE;
  const svc = bigFeed(total);
  const { gw, base, close } = await startGateway(svc, {
    stream: { maxBuffered: MAX_BUFFERED, stallTimeoutMs: 400, minWaitMs: 10, defaultWaitMs: 10 },
  });
  const queue = watchQueue(gw);
  try {
    const port = Number(new URL(base).port);
    const socket = connect(port, '127.0.0.1');
    socket.pause(); // the reader never reads while the stream is open
    socket.write('GET /api/stream/feed HTTP/1.1\r\nhost: x\r\naccept: text/event-stream\r\n\r\n');
    await until(() => gw.stats().streams === 1);
    await until(() => gw.stats().streams === 0);
    assert.equal(svc.calls.length, 1, 'no poll while the socket was full');
    assert.ok(queue.max <= MAX_BUFFERED + EVENT, `queued ${queue.max} bytes, over maxBuffered`);

    // The reader wakes up: it gets what the kernel held, then the end of the connection.
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    await new Promise<void>((resolve) => {
      socket.once('close', () => resolve());
      socket.resume();
    });
    const first = parse(dechunk(Buffer.concat(chunks)));
    assert.ok(first.entries.length > 0, 'some entries arrived before the close');
    assert.ok(first.entries.length < total, 'the stream was closed before its end');
    assert.deepEqual(first.events, [], 'no end event: the stream was cut, not finished');
    assert.deepEqual(
      first.entries.map((e) => e.n),
      Array.from({ length: first.entries.length }, (_, i) => i),
    );

    // Resume with the last id received (what EventSource sends as Last-Event-ID).
    const cursor = first.entries[first.entries.length - 1]!.id;
    const res = await fetch(base + '/api/stream/feed', { headers: { 'last-event-id': cursor } });
    assert.equal(res.status, 200);
    const second = parse(await res.text());
    assert.deepEqual(second.events, ['end']);
    const all = [...first.entries, ...second.entries].map((e) => e.n);
    assert.deepEqual(
      all,
      Array.from({ length: total }, (_, i) => i),
      'every entry exactly once, in order',
    );
    assert.ok(queue.max <= MAX_BUFFERED + EVENT, `queued ${queue.max} bytes, over maxBuffered`);
  } finally {
    await close();
  }
});

test('a client that reads gets a poll larger than maxBuffered whole, in one connection', async () => {
  const total = 2 * PAGE;
  const svc = bigFeed(total);
  const { gw, base, close } = await startGateway(svc, {
    stream: { maxBuffered: MAX_BUFFERED, stallTimeoutMs: 2000, minWaitMs: 10, defaultWaitMs: 10 },
  });
  const queue = watchQueue(gw);
  try {
    const got = parse(await (await fetch(base + '/api/stream/feed')).text());
    assert.deepEqual(
      got.entries.map((e) => e.n),
      Array.from({ length: total }, (_, i) => i),
    );
    assert.deepEqual(got.events, ['end']);
    assert.equal(svc.calls.length, 2);
    assert.ok(queue.max <= MAX_BUFFERED + EVENT, `queued ${queue.max} bytes, over maxBuffered`);
  } finally {
    await close();
  }
});
