import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { ok, ScriptedService, startGateway } from '../gateway/harness.js';

/**
 * Issue 9, item 3: `gateway.limits.maxConnections` caps open connections; one over the cap is
 * closed at once without being served, and nothing of it reaches a saga. The connections already
 * open keep being served, and once one closes a new one is accepted again.
 */

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.on('error', reject);
  });
}

/** Send one request on `socket` and resolve with the response text (the server closes after it). */
function ask(socket: Socket, path: string): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
  });
}

test('a connection over maxConnections is closed unserved; the others are served', async () => {
  const svc = new ScriptedService((req) => ok({ path: req.path }));
  const { base, close } = await startGateway(svc, { limits: { maxConnections: 2 } });
  const port = Number(new URL(base).port);

  const a = await open(port);
  const b = await open(port);
  // Node accepts, sees the cap, and closes: the client reads nothing at all.
  const over = await open(port);
  const overAnswer = await ask(over, '/api/request/over');
  assert.equal(overAnswer, '', 'nothing was served on the connection over the cap');

  // The two connections within the cap are served.
  assert.match(await ask(a, '/api/request/a'), /^HTTP\/1\.1 200 [^]*"path":"\/a"/);
  assert.match(await ask(b, '/api/request/b'), /^HTTP\/1\.1 200 /);
  // Both are closed now: room for new ones (the server may see the close a moment after the client).
  let answer = '';
  for (let i = 0; i < 40 && answer === ''; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 25));
    answer = await ask(await open(port), '/api/request/c');
  }
  assert.match(answer, /^HTTP\/1\.1 200 /);

  assert.deepEqual(
    svc.calls.map((x) => x.req.path),
    ['/a', '/b', '/c'],
    'the refused connection reached no saga',
  );
  await close();
});
