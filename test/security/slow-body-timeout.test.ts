import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { delay, ok, ScriptedService, startGateway } from '../gateway/harness.js';

/**
 * Issue 9, item 3: a client that trickles its headers or body, or opens a connection and says
 * nothing, is cut (408 problem+json, then closed) after `headerTimeout` / `bodyTimeout` /
 * `idleTimeout`; its request never reaches a saga. A normal request and an SSE stream that is
 * silent for longer than every one of those timeouts keep working on the same server.
 */

const limits = { headerTimeoutMs: 300, bodyTimeoutMs: 600, idleTimeoutMs: 800 };

interface Cut {
  ms: number;
  text: string;
}

/**
 * Over a real socket, send `head` at once, then `text` one byte every `everyMs`; resolves with
 * what came back when the server closed the connection.
 */
function trickle(port: number, head: string, text: string, everyMs: number, giveUpMs = 8000): Promise<Cut> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const chunks: Buffer[] = [];
    let i = 0;
    let timer: NodeJS.Timeout | undefined;
    const socket = connect(port, '127.0.0.1', () => {
      if (head !== '') socket.write(head);
      timer = setInterval(() => {
        if (i < text.length && socket.writable) socket.write(text[i++]!);
      }, everyMs);
    });
    const giveUp = setTimeout(() => socket.destroy(), giveUpMs);
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(timer);
      clearTimeout(giveUp);
      resolve({ ms: Date.now() - t0, text: Buffer.concat(chunks).toString('utf8') });
    });
  });
}

function assertCut(cut: Cut, withinMs: number): void {
  assert.ok(cut.ms < withinMs, `cut after ${cut.ms} ms, expected within ${withinMs} ms`);
  // Either a 408 problem+json, or closed without an answer; never a served request.
  if (cut.text !== '') {
    assert.match(cut.text, /^HTTP\/1\.1 408 /);
    assert.match(cut.text, /content-type: application\/problem\+json/);
    const body = JSON.parse(cut.text.slice(cut.text.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
    assert.equal(body['code'], 'REQUEST_TIMEOUT');
    assert.equal(body['status'], 408);
    assert.match(String(body['requestId']), /^[0-9a-f-]{36}$/);
  }
}

test('a trickled body, trickled headers and a silent connection are cut; normal requests and a quiet stream live on', async () => {
  const svc = new ScriptedService(async (req) => {
    if (req.path === '/feed') {
      // Each poll waits 1.2 s: the stream is silent for longer than every timeout above.
      const prev = typeof req.input['previous'] === 'number' ? req.input['previous'] : 0;
      return ok({ list: [{ n: prev }], next: prev + 1, continue: prev < 2, wait: 1200 });
    }
    await delay(10);
    return ok({ got: req.input });
  });
  const { base, close } = await startGateway(svc, { limits, stream: { minWaitMs: 10, heartbeatMs: 60_000 } });
  const port = Number(new URL(base).port);

  // The stream opens first and must survive every cut below.
  const stream = await fetch(base + '/api/stream/feed');
  assert.equal(stream.status, 200);
  const streamText = stream.text();

  const body = '{"note":"' + 'x'.repeat(80) + '"}';
  // The headers at once, the body one byte every 50 ms (4.5 s for all of it).
  const slowBody = trickle(
    port,
    `POST /api/request/slow HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    body,
    50,
  );
  const slowHeaders = trickle(
    port,
    '',
    'GET /api/request/slow HTTP/1.1\r\nHost: x\r\nX-Pad: ' + 'y'.repeat(200) + '\r\n\r\n',
    20,
  );
  const silent = trickle(port, '', '', 1000);

  // Meanwhile a normal request is served.
  const normal = await fetch(base + '/api/request/normal', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"a":1}',
  });
  assert.equal(normal.status, 200);
  assert.deepEqual(await normal.json(), { got: { a: 1 } });

  const [b, h, s] = await Promise.all([slowBody, slowHeaders, silent]);
  assertCut(b, 3000);
  assertCut(h, 3000);
  assertCut(s, 3000);
  assert.ok(b.ms >= 500, `the body was given its time (${b.ms} ms)`);

  // Nothing of the slow requests reached a saga.
  assert.deepEqual(
    svc.calls.map((c) => c.req.path).filter((p) => p !== '/feed'),
    ['/normal'],
  );

  // The quiet stream (1.2 s between events, no heartbeat) delivered everything and ended normally.
  const events = await streamText;
  assert.equal((events.match(/^data: /gm) ?? []).length, 4, events);
  assert.match(events, /event: end/);

  // And the server still serves after all that.
  const after = await fetch(base + '/api/request/after', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  assert.equal(after.status, 200);
  await close();
});

test('a one-shot request whose saga is slower than the header and body timeouts is answered', async () => {
  const svc = new ScriptedService(async () => {
    await delay(700);
    return ok({ done: true });
  });
  const { base, close } = await startGateway(svc, { limits });
  const res = await fetch(base + '/api/request/slow-saga');
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { done: true });
  await close();
});

test('a keep-alive connection that stays silent after its response is closed after idleTimeout', async () => {
  const svc = new ScriptedService(() => ok({ n: 1 }));
  const { base, close } = await startGateway(svc, { limits });
  const port = Number(new URL(base).port);
  const cut = await trickle(port, 'GET /api/request/x HTTP/1.1\r\nHost: x\r\n\r\n', '', 1000);
  assert.match(cut.text, /^HTTP\/1\.1 200 /, 'the request itself was served');
  // idleTimeout (0.8 s) plus Node's one-second keep-alive grace, far below fastify's 72 s default.
  assert.ok(cut.ms >= 700 && cut.ms < 3000, `closed after ${cut.ms} ms`);
  await close();
});
