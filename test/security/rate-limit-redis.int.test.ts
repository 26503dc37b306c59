import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { ApiSettings } from '../../src/config/settings.js';
import { skipOrFail } from '../states/pg-available.js';
import { ok, ScriptedService, startGateway } from '../gateway/harness.js';

/**
 * Issue 9, item 10 with several gateway replicas: `gateway.limits.rate.redis` makes two gateway
 * instances share one count (the real Redis at 127.0.0.1:6379). Requests over the shared limit
 * are refused on whichever instance they land and reach no saga; while Redis is unreachable the
 * gateway serves uncounted (fail open) instead of failing.
 */

const URL = process.env['SAGAWAY_TEST_REDIS'] ?? 'redis://127.0.0.1:6379';

async function redisUnavailableReason(url: string): Promise<string | undefined> {
  const client = new Redis(url, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
    return undefined;
  } catch (err) {
    return `Redis not reachable at ${url}: ${(err as Error).message}`;
  } finally {
    client.disconnect();
  }
}

const reason = await redisUnavailableReason(URL);

/** An API with its own limit under a fresh prefix, so that runs of this test never share a count. */
function apisFor(prefix: string, max: number): ApiSettings[] {
  return [
    { path: prefix, runner: 'main', roles: [], public: true, rate: { max, windowMs: 60_000 } },
    { path: '/', runner: 'main', roles: [], public: true },
  ];
}

test('two gateways on one Redis share the count', { skip: reason && skipOrFail(reason) }, async () => {
  const prefix = `/t${randomUUID().slice(0, 8)}`;
  const svc = new ScriptedService((req) => ok({ path: req.path }));
  const limits = { rate: { max: 1000, windowMs: 60_000, redis: URL } };
  const one = await startGateway(svc, { apis: apisFor(prefix, 4), limits });
  const two = await startGateway(svc, { apis: apisFor(prefix, 4), limits });
  try {
    const statuses: number[] = [];
    // Alternate between the instances: 4 are served in all, then both refuse.
    for (let i = 0; i < 8; i++) {
      const res = await fetch((i % 2 === 0 ? one.base : two.base) + `/api/request${prefix}/x`);
      statuses.push(res.status);
      if (res.status === 429) {
        const body = (await res.json()) as { code?: string };
        assert.equal(body.code, 'RATE_LIMITED');
        assert.ok(Number(res.headers.get('retry-after')) >= 1);
      } else await res.arrayBuffer();
    }
    assert.deepEqual(statuses, [200, 200, 200, 200, 429, 429, 429, 429]);
    assert.equal(svc.calls.length, 4, 'only the requests within the shared limit ran');
    // The count lives in Redis under our namespace, with the window as its TTL.
    const client = new Redis(URL);
    try {
      const key = `sagaway:rate:${prefix}|anon:127.0.0.1`;
      assert.equal(await client.get(key), '8');
      const ttl = await client.pttl(key);
      assert.ok(ttl > 0 && ttl <= 60_000, `ttl ${ttl}`);
      await client.del(key);
    } finally {
      client.disconnect();
    }
  } finally {
    await one.close();
    await two.close();
  }
});

test('with Redis unreachable the gateway serves uncounted', { skip: reason && skipOrFail(reason) }, async () => {
  const svc = new ScriptedService(() => ok({}));
  // Nothing listens on port 1: every count fails at once (no offline queue).
  const { base, close } = await startGateway(svc, {
    limits: { rate: { max: 1, windowMs: 60_000, redis: 'redis://127.0.0.1:1' } },
  });
  try {
    for (let i = 0; i < 3; i++) {
      const res = await fetch(base + '/api/request/x');
      assert.equal(res.status, 200);
      await res.arrayBuffer();
    }
    assert.equal(svc.calls.length, 3);
  } finally {
    await close();
  }
});
