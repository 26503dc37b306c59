import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { delay, ok, ScriptedService, startGateway } from '../gateway/harness.js';

/**
 * Issue 19, item 6: a stream whose socket stays full closes within `stallTimeout` plus one
 * heartbeat. Before, the stall clock started only when the next poll wanted to write: a saga
 * that waits between polls kept a stalled socket open for its whole wait (a stream was still
 * open 35 s after a 30 s stallTimeout). Here the poll writes everything at once (it fits under
 * maxBuffered), leaving the socket full, and the saga asks for a 20 s wait before the next one.
 */

const PAD = 'x'.repeat(64 * 1024);
const ENTRIES = 200; // 13 MB in one write: more than the kernel's socket buffers take
const WAIT_MS = 20_000;

async function until(cond: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await delay(5);
  }
}

test('a stalled stream closes within stallTimeout + one heartbeat, not after the saga’s wait', async () => {
  const svc = new ScriptedService(() =>
    ok({ list: Array.from({ length: ENTRIES }, (_, n) => ({ n, pad: PAD })), next: 1, continue: true, wait: WAIT_MS }),
  );
  const stallTimeoutMs = 300;
  const heartbeatMs = 200;
  const { gw, base, close } = await startGateway(svc, {
    limits: { maxResponse: 64 * 1024 * 1024 },
    stream: { maxBuffered: 64 * 1024 * 1024, stallTimeoutMs, heartbeatMs, maxWaitMs: 60_000 },
  });
  const socket = connect(Number(new URL(base).port), '127.0.0.1');
  try {
    socket.pause(); // the client never reads
    socket.write('GET /api/stream/feed HTTP/1.1\r\nhost: x\r\naccept: text/event-stream\r\n\r\n');
    await until(() => gw.stats().streams === 1, 10_000);
    const opened = Date.now();
    await until(() => gw.stats().streams === 0, WAIT_MS + 10_000);
    const openFor = Date.now() - opened;
    assert.equal(svc.calls.length, 1, 'no second poll');
    // Relative to the saga's wait, which used to be the floor: the cut comes long before it.
    assert.ok(openFor < WAIT_MS / 4, `the stalled stream stayed open ${openFor} ms (the saga waits ${WAIT_MS} ms)`);
  } finally {
    socket.destroy();
    await close();
  }
});
