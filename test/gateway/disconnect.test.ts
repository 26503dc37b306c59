import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { delay, ok, ScriptedService, startGateway } from './harness.js';

/** Count the process's active resources of one type (timers, sockets...). */
function resources(type: string): number {
  return process.getActiveResourcesInfo().filter((r) => r === type).length;
}

function openStream(port: number, path: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => {
      s.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n`);
    });
    s.once('data', () => resolve(s));
    s.on('error', reject);
  });
}

async function until(cond: () => boolean, ms = 3000): Promise<void> {
  const t0 = Date.now();
  while (!cond() && Date.now() - t0 < ms) await delay(10);
}

/**
 * 200 streams, half inside a saga run (which only ends when aborted), half asleep between two
 * polls (wait 60 s), all dropped at once: nothing may be left. With `share: off` every stream
 * has its own run or wait timer; shared, the 100 in a run joined one run and the 100 asleep one
 * poll group, and dropping them must still stop that run and that timer.
 */
for (const share of ['off', 'caller'] as const) {
  const runs = share === 'off' ? 100 : 1;
  const waits = share === 'off' ? 100 : 1;
  test(`200 streams opened and dropped leave no timers, sockets or saga runs behind (share: ${share})`, async () => {
    const svc = new ScriptedService(async (req) => {
      if (req.query['mode'] === 'sleep') return ok({ list: [{ a: 1 }], continue: true, wait: 60_000 });
      await delay(60_000, req.signal);
      return ok({ list: [] });
    });
    const { gw, base, close } = await startGateway(svc, {
      stream: { maxPerClient: 1000, heartbeatMs: 30_000, maxWaitMs: 120_000, share },
    });
    const port = Number(new URL(base).port);
    const timersBefore = resources('Timeout');
    const socketsBefore = resources('TCPSocketWrap');
    const sockets: Socket[] = [];
    try {
      for (let i = 0; i < 200; i += 20) {
        const batch = await Promise.all(
          Array.from({ length: 20 }, (_, j) =>
            openStream(port, `/api/stream/feed?mode=${(i + j) % 2 === 0 ? 'run' : 'sleep'}`),
          ),
        );
        sockets.push(...batch);
      }
      await until(() => svc.inFlight === runs && gw.stats().timers === 200 + waits);
      assert.equal(gw.stats().streams, 200);
      assert.equal(svc.inFlight, runs, `${runs} saga runs in flight`);
      assert.equal(gw.stats().streamRuns, runs);
      assert.equal(gw.stats().timers, 200 + waits, `200 heartbeats + ${waits} waits`);
      assert.ok(resources('Timeout') >= timersBefore + 200 + waits);
      if (share !== 'off') {
        const metrics = await gw.metrics.registry.metrics();
        assert.match(metrics, /sagaway_stream_groups 2\n/);
        assert.match(metrics, /sagaway_stream_shared_members 200\n/);
      }
      const connections = () => new Promise<number>((r) => gw.app.server.getConnections((_e, n) => r(n)));
      assert.equal(await connections(), 200);

      for (const s of sockets) s.destroy();
      await until(() => gw.stats().streams === 0 && svc.inFlight === 0);
      await until(() => resources('TCPSocketWrap') <= socketsBefore);

      assert.deepEqual(gw.stats(), { streams: 0, timers: 0, streamRuns: 0 });
      assert.equal(svc.inFlight, 0, 'no saga run left');
      assert.equal(svc.aborted, runs, 'every run in flight was aborted');
      assert.equal(await connections(), 0);
      assert.ok(resources('Timeout') <= timersBefore, `timers: ${resources('Timeout')} > ${timersBefore}`);
      assert.ok(resources('TCPSocketWrap') <= socketsBefore);
      // No timer and no run left (above): no loop is left that could poll again.
      const metrics = await gw.metrics.registry.metrics();
      assert.match(metrics, /sagaway_streams_active 0/);
      assert.match(metrics, /sagaway_stream_groups 0\n/);
    } finally {
      for (const s of sockets) s.destroy();
      await close();
    }
  });
}

test('closing the gateway ends open streams', async () => {
  const svc = new ScriptedService((req) => delay(60_000, req.signal).then(() => ok({ list: [] })));
  const { gw, base, close } = await startGateway(svc);
  const res = await fetch(base + '/api/stream/feed');
  assert.equal(res.status, 200);
  const text = res.text();
  await until(() => svc.inFlight === 1);
  await close();
  assert.equal(await text, '');
  assert.deepEqual(gw.stats(), { streams: 0, timers: 0, streamRuns: 0 });
  assert.equal(svc.aborted, 1);
});

test('a connection that never sends a request does not hold up closing', async () => {
  const svc = new ScriptedService(() => ok({}));
  const { base, close } = await startGateway(svc);
  const silent = connect(Number(new URL(base).port), '127.0.0.1');
  silent.on('error', () => {});
  await new Promise((r) => silent.once('connect', r));
  const closed = new Promise((r) => silent.once('close', r));
  const t0 = Date.now();
  await close();
  assert.ok(Date.now() - t0 < 2000, `close took ${Date.now() - t0} ms`);
  await closed;
});
