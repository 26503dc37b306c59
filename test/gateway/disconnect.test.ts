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

test('200 streams opened and dropped leave no timers, sockets or saga runs behind', async () => {
  // Half of the streams are inside a saga run (which only ends when aborted), half are asleep
  // between two polls (wait 60 s): both must stop at once when their client goes.
  const svc = new ScriptedService(async (req) => {
    if (req.query['mode'] === 'sleep') return ok({ list: [{ a: 1 }], continue: true, wait: 60_000 });
    await delay(60_000, req.signal);
    return ok({ list: [] });
  });
  const { gw, base, close } = await startGateway(svc, {
    stream: { maxPerClient: 1000, heartbeatMs: 30_000, maxWaitMs: 120_000 },
  });
  const port = Number(new URL(base).port);
  const timersBefore = resources('Timeout');
  const socketsBefore = resources('TCPSocketWrap');

  const sockets: Socket[] = [];
  for (let i = 0; i < 200; i += 20) {
    const batch = await Promise.all(
      Array.from({ length: 20 }, (_, j) =>
        openStream(port, `/api/stream/feed?mode=${(i + j) % 2 === 0 ? 'run' : 'sleep'}`),
      ),
    );
    sockets.push(...batch);
  }
  await until(() => svc.inFlight === 100 && gw.stats().timers === 300);
  assert.equal(gw.stats().streams, 200);
  assert.equal(svc.inFlight, 100, '100 saga runs in flight');
  assert.equal(gw.stats().streamRuns, 100);
  assert.equal(gw.stats().timers, 300, '200 heartbeats + 100 waits');
  assert.ok(resources('Timeout') >= timersBefore + 300);
  const connections = () => new Promise<number>((r) => gw.app.server.getConnections((_e, n) => r(n)));
  assert.equal(await connections(), 200);

  for (const s of sockets) s.destroy();
  await until(() => gw.stats().streams === 0 && svc.inFlight === 0);
  await until(() => resources('TCPSocketWrap') <= socketsBefore);

  assert.deepEqual(gw.stats(), { streams: 0, timers: 0, streamRuns: 0 });
  assert.equal(svc.inFlight, 0, 'no saga run left');
  assert.equal(svc.aborted, 100, 'every run in flight was aborted');
  assert.equal(await connections(), 0);
  assert.ok(resources('Timeout') <= timersBefore, `timers: ${resources('Timeout')} > ${timersBefore}`);
  assert.ok(resources('TCPSocketWrap') <= socketsBefore);
  const runs = svc.calls.length;
  await delay(200);
  assert.equal(svc.calls.length, runs, 'no loop polls again');
  assert.match(await gw.metrics.registry.metrics(), /sagaway_streams_active 0/);
  await close();
});

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
