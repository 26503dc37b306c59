import { test } from 'node:test';
import assert from 'node:assert/strict';
import { delay, ok, ScriptedService, startGateway } from './harness.js';
import { collect, ns, range } from './sse-client.js';
import { settingsFor } from '../../src/testing/settings.js';

/**
 * gateway.stream.maxLifetime (issue 25, item 4): an SSE stream is closed after that long with a
 * retry hint and a resumable id; the client comes back by itself and misses nothing.
 */

function liveLog() {
  const log = { length: 0, closed: false };
  const svc = new ScriptedService((req) => {
    const from = typeof req.input['previous'] === 'number' ? req.input['previous'] : 0;
    const list = range(from, log.length).map((n) => ({ n }));
    return ok({ list, next: log.length, continue: !(log.closed && from + list.length >= log.length), wait: 30 });
  });
  return { log, svc };
}

test('maxLifetime: the stream closes with retry and its position as id; EventSource resumes, every entry once', async () => {
  const { log, svc } = liveLog();
  const { gw, base, close } = await startGateway(svc, {
    stream: { minWaitMs: 10, share: 'all', maxLifetimeMs: 400 },
  });
  const a = collect(base + '/api/stream/feed');
  const b = collect(base + '/api/stream/feed');
  try {
    for (let i = 0; i < 40; i++) {
      await delay(40);
      log.length++;
    }
    log.closed = true;
    const [ga, gb] = await Promise.all([a.done, b.done]);
    for (const g of [ga, gb]) {
      assert.deepEqual(ns(g), range(0, 40), 'every entry once, in order, across the closes');
      assert.ok(g.end);
      assert.ok(g.opens >= 3, `closed at its lifetime and reopened: ${g.opens} opens`);
    }
    assert.ok(gw.metrics.lifetimeCloses.value >= 4);
  } finally {
    a.es.close();
    b.es.close();
    await close();
  }
});

test('maxLifetime: the close is an event without data: id (a start token) and retry, then the end', async () => {
  const { svc } = liveLog();
  const { base, close } = await startGateway(svc, { stream: { minWaitMs: 10, maxLifetimeMs: 200 } });
  try {
    const t0 = Date.now();
    const res = await fetch(base + '/api/stream/feed');
    const text = await res.text();
    assert.ok(Date.now() - t0 >= 180, 'open for its lifetime');
    assert.match(text, /(?:^|\n)id: [A-Za-z0-9_-]+\.s\.[A-Za-z0-9_-]{22}\nretry: 500\n\n$/);
    const id = /id: (\S+)\nretry/.exec(text)![1]!;
    // the id resumes: the stream reopens from that position
    const again = await fetch(base + '/api/stream/feed', { headers: { 'last-event-id': id } });
    assert.equal(again.status, 200);
    await again.body?.cancel();
  } finally {
    await close();
  }
});

test('maxLifetime is off by default; the configuration takes a duration', () => {
  assert.equal(settingsFor({}).gateway.stream.maxLifetimeMs, undefined);
  const on = settingsFor({ gateway: { stream: { maxLifetime: '10m', longPoll: { hold: '30s', maxAge: '2s' } } } });
  assert.equal(on.gateway.stream.maxLifetimeMs, 600_000);
  assert.deepEqual(on.gateway.stream.longPoll, { holdMs: 30_000, maxAge: 2, staleWhileRevalidate: 10 });
});
