import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { EventSource } from 'eventsource';
import { collect, ns, range } from './sse-client.js';
import type { SagaRequest } from '../../src/core/types.js';
import { delay, feedService, ok, ScriptedService, startGateway } from './harness.js';

const fast = { minWaitMs: 10, defaultWaitMs: 10 };

async function until(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) assert.fail(`timed out waiting until ${what}`);
    await delay(5);
  }
}

test('loop: every entry once and in order, previous = last next, then event: end', async () => {
  const svc = feedService(10, 3);
  const { base, close } = await startGateway(svc, { stream: fast });
  const { es, done } = collect(base + '/api/stream/feed?tag=x');
  const got = await done;
  es.close();
  assert.deepEqual(ns(got), range(0, 10));
  assert.deepEqual(got.end!.data, { reason: 'complete' });
  assert.equal(new Set(got.entries.map((e) => e.id)).size, 10, 'every entry has its own cursor token');
  assert.deepEqual(
    svc.calls.map((c) => c.req.input),
    [{ tag: 'x' }, { tag: 'x', previous: 3 }, { tag: 'x', previous: 6 }, { tag: 'x', previous: 9 }],
  );
  assert.equal(svc.calls[0]!.req.path, '/feed');
  await close();
});

test('a poll without next keeps the last previous; an unusable wait falls back to the default', async () => {
  const responses = [
    { list: [1], next: 'a', continue: true, wait: 'soon' },
    { list: [2], continue: true, wait: '30ms' },
    { list: [3], next: 'b', continue: true, wait: 5 },
    { list: [4] },
  ];
  const svc = new ScriptedService((_req, _r, n) => ok(responses[n - 1]));
  const { base, close } = await startGateway(svc, { stream: { minWaitMs: 20, defaultWaitMs: 200 } });
  const { es, done } = collect(base + '/api/stream/x');
  const got = await done;
  es.close();
  assert.deepEqual(
    got.entries.map((e) => e.data),
    [1, 2, 3, 4],
  );
  assert.deepEqual(
    svc.calls.map((c) => c.req.input['previous']),
    [undefined, 'a', 'a', 'b'],
  );
  assert.ok(!Object.hasOwn(svc.calls[0]!.req.input, 'previous'), 'the first poll has no previous at all');
  await close();
});

test('resume from ?lastEventId= and from the Last-Event-ID header: nothing lost or repeated, also mid-batch', async () => {
  const svc = feedService(10, 4);
  const { base, close, gw } = await startGateway(svc, { stream: fast });
  const first = collect(base + '/api/stream/feed', undefined, (g) => g.entries.length === 6);
  const part = await first.done;
  first.es.close();
  assert.deepEqual(ns(part), range(0, 6));
  const cut = part.entries[5]!.id; // entry 5 is the second of the batch that previous=4 produced
  const second = collect(`${base}/api/stream/feed?lastEventId=${encodeURIComponent(cut)}`);
  const rest = await second.done;
  second.es.close();
  assert.deepEqual(ns(rest), range(6, 10));
  assert.ok(rest.end);

  const viaHeader = collect(base + '/api/stream/feed', {
    fetch: (url, init) => fetch(url, { ...init, headers: { ...init?.headers, 'Last-Event-ID': part.entries[2]!.id } }),
  });
  const rest2 = await viaHeader.done;
  viaHeader.es.close();
  assert.deepEqual(ns(rest2), range(3, 10));
  const metrics = await (await fetch(base + '/metrics')).text();
  assert.match(metrics, /sagaway_stream_resumes_total 2/);
  assert.equal(gw.stats().streams, 0);
  await close();
});

test('the server drops the connection mid-batch; the client reconnects with Last-Event-ID and gets every entry exactly once', async () => {
  const sockets = new Set<Socket>();
  let drop = false;
  const inner = feedService(12, 5);
  const svc = new ScriptedService(async (req, runner, n) => {
    const result = await inner.run(runner, req);
    // With maxEntries 2, poll 4 sends entries 5 and 6 of the batch that previous=5 produced
    // (entries 5..9); the first of them that arrives cuts every connection: mid-batch.
    if (n === 4) drop = true;
    return result;
  });
  const { base, close, gw } = await startGateway(svc, { stream: { ...fast, maxEntries: 2 } });
  gw.app.server.on('connection', (s: Socket) => sockets.add(s));
  const { es, done } = collect(base + '/api/stream/feed', undefined, () => {
    if (drop) {
      drop = false;
      for (const s of sockets) s.destroy();
    }
    return false;
  });
  const got = await done;
  es.close();
  assert.deepEqual(ns(got), range(0, 12));
  assert.equal(got.opens, 2, 'one automatic reconnect');
  await close();
});

test('a reconnect with the final token is answered 204 and the EventSource stops', async () => {
  const svc = feedService(2, 5);
  const { base, close } = await startGateway(svc, { stream: fast });
  const es = new EventSource(base + '/api/stream/feed');
  let endId = '';
  const errors: Array<{ code?: number }> = [];
  es.addEventListener('end', (ev) => (endId = ev.lastEventId));
  es.onerror = (ev) => errors.push(ev as unknown as { code?: number });
  const t0 = Date.now();
  while (es.readyState !== es.CLOSED && Date.now() - t0 < 10_000) await delay(50);
  assert.equal(es.readyState, es.CLOSED);
  assert.ok(endId !== '');
  assert.ok(
    errors.some((e) => e.code === 204),
    'the client saw the 204',
  );
  assert.equal(svc.calls.length, 1, 'the finished stream was not run again');
  const res = await fetch(base + '/api/stream/feed', { headers: { 'last-event-id': endId } });
  assert.equal(res.status, 204);
  await close();
});

/** The token with its tag's second-to-last character changed (always to another one). */
function forgeTag(token: string): string {
  const c = token.at(-2) === 'A' ? 'B' : 'A';
  return token.slice(0, -2) + c + token.slice(-1);
}

test('forged or foreign cursors are 400 INVALID_CURSOR', async () => {
  const svc = feedService(3, 3);
  const { base, close } = await startGateway(svc, { stream: fast });
  const { es, done } = collect(base + '/api/stream/feed');
  const got = await done;
  es.close();
  // (closing the gateway in `finally` ends a stream that a wrongly accepted token opened)
  try {
    for (const [path, token] of [
      ['/api/stream/other', got.entries[0]!.id],
      ['/api/stream/feed', 'forged.token'],
      ['/api/stream/feed', forgeTag(got.entries[0]!.id)],
    ] as const) {
      const res = await fetch(`${base}${path}?lastEventId=${encodeURIComponent(token)}`);
      assert.equal(res.status, 400);
      const body = (await res.json()) as { code: string };
      assert.equal(body.code, 'INVALID_CURSOR');
    }
  } finally {
    await close();
  }
});

test('a failed saga run sends event: error with the problem, then closes; the reconnect gets 204', async () => {
  const svc = new ScriptedService((_req, _r, n) =>
    n === 1
      ? ok({ list: [{ a: 1 }], continue: true, wait: 0 })
      : { outcome: 'FAIL', http: 503, error: { code: 'TODOS_UNAVAILABLE', message: 'down', http: 503 } },
  );
  const { base, close, gw } = await startGateway(svc, { stream: fast });
  // No es.close() on the error: the client reconnects by itself, as browsers do.
  const es = new EventSource(base + '/api/stream/feed', {
    fetch: (u, i) => fetch(u, { ...i, headers: { ...i?.headers, 'x-request-id': 'req-1' } }),
  });
  const entries: unknown[] = [];
  const problems: unknown[] = [];
  const codes: unknown[] = [];
  es.onmessage = (ev) => entries.push(JSON.parse(ev.data));
  es.addEventListener('error', (ev) => {
    const e = ev as unknown as { data?: string; code?: number };
    if (e.data !== undefined) problems.push(JSON.parse(e.data));
    else codes.push(e.code);
  });
  const t0 = Date.now();
  while (es.readyState !== es.CLOSED && Date.now() - t0 < 10_000) await delay(50);
  assert.equal(es.readyState, es.CLOSED);
  assert.deepEqual(entries, [{ a: 1 }]);
  // The request id is the gateway's run id; the client's X-Request-Id is a correlation id only.
  const runId = svc.calls[0]!.req.requestId;
  assert.match(runId, /^[0-9a-f-]{36}$/);
  assert.equal(svc.calls[0]!.req.correlationId, undefined, 'streams do not index correlation ids');
  assert.deepEqual(problems, [
    {
      type: 'https://sagaway.dev/errors/TODOS_UNAVAILABLE',
      title: 'Todos Unavailable',
      status: 503,
      code: 'TODOS_UNAVAILABLE',
      detail: 'down',
      requestId: runId,
    },
  ]);
  assert.ok(codes.includes(204), 'the automatic reconnect was answered 204');
  assert.equal(svc.calls.length, 2, 'the failing saga was not run again');
  assert.equal(gw.stats().streams, 0);
  await close();
});

test('a retryable failure keeps the resume position and asks for a slower reconnect', async () => {
  const svc = new ScriptedService((_req, _r, n) =>
    n === 1
      ? ok({ list: [{ a: 1 }], continue: true, wait: 0 })
      : { outcome: 'FAIL', http: 503, error: { code: 'RUNNER_UNAVAILABLE', message: 'no runner', http: 503 } },
  );
  const { base, close } = await startGateway(svc, { stream: fast });
  const text = await (await fetch(base + '/api/stream/feed')).text();
  const blocks = text.split('\n\n').filter((b) => b !== '');
  assert.equal(blocks.length, 2);
  assert.match(blocks[1]!, /^event: error\nretry: 5000\ndata: {.*"code":"RUNNER_UNAVAILABLE"/);
  assert.doesNotMatch(blocks[1]!, /\nid: /);
  await close();
});

test('heartbeat: a ": ping" comment after heartbeat of silence, also while a poll is in flight', async () => {
  const svc = new ScriptedService(async (req, _r, n) => {
    if (n === 1) return ok({ list: [{ a: 1 }], continue: true, wait: 450 });
    await delay(400, req.signal);
    return ok({ list: [{ a: 2 }] });
  });
  const { base, close } = await startGateway(svc, { stream: { heartbeatMs: 100, minWaitMs: 10 } });
  const res = await fetch(base + '/api/stream/feed');
  assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
  assert.equal(res.headers.get('cache-control'), 'no-cache, no-transform');
  assert.equal(res.headers.get('x-accel-buffering'), 'no');
  assert.equal(res.headers.get('content-encoding'), null);
  const text = await res.text();
  const pings = text.split(': ping\n\n').length - 1;
  // ≈ 8 expected (900 ms of 100 ms heartbeats); wide bounds for loaded machines.
  assert.ok(pings >= 3 && pings <= 12, `pings: ${pings}`);
  assert.match(text, /^id: .*\ndata: {"a":1}\n\n/);
  assert.match(text, /event: end\nid: .*\ndata: {"reason":"complete"}\n\n$/);
  await close();
});

test('limits: maxPerClient is 429 and maxStreams 503, both with Retry-After; slots come back on close', async () => {
  const svc = new ScriptedService((req) => delay(60_000, req.signal).then(() => ok({ list: [] })));
  const keys = ['key-one', 'key-two'].map((k) => ({
    name: k,
    sha256: createHash('sha256').update(k).digest('hex'),
    roles: [],
  }));
  const { base, close, gw } = await startGateway(svc, {
    stream: { maxPerClient: 2, maxStreams: 3 },
    auth: { apiKeys: keys },
  });
  const open = async (headers: Record<string, string> = {}) => {
    const ac = new AbortController();
    const res = await fetch(base + '/api/stream/feed', { headers, signal: ac.signal });
    return { res, ac };
  };
  // Anonymous callers are counted by address: these three come from the same one.
  const a = await open();
  const b = await open();
  const c = await open();
  assert.deepEqual([a.res.status, b.res.status], [200, 200]);
  assert.equal(c.res.status, 429);
  assert.equal(c.res.headers.get('retry-after'), '5');
  assert.equal(((await c.res.json()) as { code: string }).code, 'TOO_MANY_STREAMS');
  // An authenticated caller is another client: admitted, and that makes 3 streams in total.
  const d = await open({ 'x-api-key': 'key-one' });
  assert.equal(d.res.status, 200);
  const e = await open({ 'x-api-key': 'key-two' });
  assert.equal(e.res.status, 503);
  assert.equal(e.res.headers.get('retry-after'), '5');
  assert.equal(((await e.res.json()) as { code: string }).code, 'STREAMS_EXHAUSTED');
  assert.equal(gw.stats().streams, 3);
  a.ac.abort();
  const t0 = Date.now();
  while (gw.stats().streams > 2 && Date.now() - t0 < 2000) await delay(10);
  const f = await open({ 'x-api-key': 'key-two' });
  assert.equal(f.res.status, 200);
  for (const x of [b, d, f]) x.ac.abort();
  const metrics = await gw.metrics.registry.metrics();
  assert.match(metrics, /sagaway_stream_rejected_total{code="TOO_MANY_STREAMS"} 1/);
  assert.match(metrics, /sagaway_stream_rejected_total{code="STREAMS_EXHAUSTED"} 1/);
  await close();
});

test('backpressure: no poll while the socket is full; a stalled client is closed', async () => {
  const big = 'x'.repeat(64 * 1024);
  const callTimes: number[] = [];
  const svc = new ScriptedService(() => {
    callTimes.push(Date.now());
    return ok({ list: Array.from({ length: 16 }, () => big), continue: true, wait: 0 });
  });
  const { base, close, gw } = await startGateway(svc, { stream: { minWaitMs: 1, stallTimeoutMs: 1500 } });
  const port = Number(new URL(base).port);
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  await new Promise((r) => socket.once('connect', r));
  socket.pause(); // never read: the kernel buffers fill, then the response buffers
  socket.write('GET /api/stream/feed HTTP/1.1\r\nHost: x\r\n\r\n');
  await until(() => svc.calls.length >= 1, 'the first poll');
  // The stall timeout closes the stream; until then, polls went on only while the kernel and
  // response buffers had room (1 MB a poll): with `wait: 0` a loop that polled regardless would
  // have made hundreds of runs in the 1.5 s.
  await until(() => gw.stats().streams === 0, 'the stalled stream is closed');
  const closedAt = Date.now();
  const polls = svc.calls.length;
  assert.ok(polls >= 1 && polls < 64, `polls while full: ${polls}`);
  assert.ok(
    closedAt - callTimes.at(-1)! >= 1490,
    'not closed before the stall timeout after its last poll (10 ms for timer rounding)',
  );
  assert.equal(gw.stats().timers, 0);
  socket.destroy();
  await close();
});

test('POST streams use the body as INPUT; the gateway keys are kept out of INPUT', async () => {
  const seen: SagaRequest[] = [];
  const svc = new ScriptedService((req) => {
    seen.push(req);
    return ok({ list: [req.input] });
  });
  const { base, close } = await startGateway(svc, { stream: fast });
  const res = await fetch(base + '/api/stream/feed?q=1', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"filter":"open"}',
  });
  assert.equal(res.status, 200);
  assert.match(await res.text(), /data: {"filter":"open"}/);
  assert.equal(seen[0]!.method, 'POST');
  assert.deepEqual(seen[0]!.query, { q: '1' });
  await close();
});

test('HEAD on the stream form answers the stream headers and runs nothing', async () => {
  const svc = feedService(3, 3);
  const { base, close, gw } = await startGateway(svc);
  const res = await fetch(base + '/api/stream/feed', { method: 'HEAD' });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
  assert.equal(await res.text(), '');
  assert.equal(svc.calls.length, 0);
  assert.equal(gw.stats().streams, 0);
  await close();
});
