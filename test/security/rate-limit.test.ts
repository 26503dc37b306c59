import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import type { ApiSettings } from '../../src/config/settings.js';
import { silentLogger } from '../../src/core/logger.js';
import { createGateway } from '../../src/gateway/server.js';
import { delay, feedService, ok, ScriptedService, settingsWith, startGateway } from '../gateway/harness.js';
import { capturingLogger } from './inject-canary.js';

/**
 * Issue 9, item 10: per-client rate limits on both forms. Over the limit a request is `429
 * RATE_LIMITED` problem+json with Retry-After and the RateLimit / RateLimit-Policy headers, and
 * never reaches a saga; other clients (another principal), other APIs with their own limit, APIs
 * without one and the health endpoints are served meanwhile. A stream counts per connection.
 */

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const pub = (path: string, extra: Partial<ApiSettings> = {}): ApiSettings => ({
  path,
  runner: 'main',
  roles: [],
  public: true,
  ...extra,
});
const apis = [pub('/own', { rate: { max: 1, windowMs: 60_000 } }), pub('/free', { rate: false }), pub('/')];
const auth = {
  apiKeys: [
    { name: 'alice', sha256: sha('alice-key'), roles: [] },
    { name: 'bob', sha256: sha('bob-key'), roles: [] },
  ],
};

async function problemOf(res: Response): Promise<Record<string, unknown>> {
  assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
  const body = (await res.json()) as Record<string, unknown>;
  assert.equal(body['requestId'], res.headers.get('x-request-id'));
  return body;
}

test('over its limit a client gets 429 RATE_LIMITED; other clients, other APIs and health are served', async () => {
  const svc = new ScriptedService((req) => ok({ path: req.path, user: req.user?.sub }));
  const { base, close } = await startGateway(svc, { apis, auth, limits: { rate: { max: 3, windowMs: 60_000 } } });

  for (let i = 0; i < 3; i++) {
    const res = await fetch(base + '/api/request/a');
    assert.equal(res.status, 200);
    // The RateLimit headers appear once half the quota (1 of 3) is used.
    if (i === 0) {
      assert.equal(res.headers.get('ratelimit'), null, 'far from the limit: no headers');
    } else {
      assert.equal(res.headers.get('ratelimit-policy'), '"default";q=3;w=60');
      assert.match(res.headers.get('ratelimit') ?? '', new RegExp(`^"default";r=${2 - i};t=(60|59)$`));
    }
    await res.arrayBuffer();
  }
  const refused = await fetch(base + '/api/request/a', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  assert.equal(refused.status, 429);
  const retryAfter = Number(refused.headers.get('retry-after'));
  assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
  assert.match(refused.headers.get('ratelimit') ?? '', /^"default";r=0;t=\d+$/);
  assert.equal(refused.headers.get('ratelimit-policy'), '"default";q=3;w=60');
  const problem = await problemOf(refused);
  assert.equal(problem['code'], 'RATE_LIMITED');
  assert.equal(problem['status'], 429);

  // The stream form shares the client's count: refused before the stream opens.
  const stream = await fetch(base + '/api/stream/feed');
  assert.equal(stream.status, 429);
  assert.equal((await problemOf(stream))['code'], 'RATE_LIMITED');
  // The status route too (a journal read per request).
  const status = await fetch(base + '/api/status/some-id');
  assert.equal(status.status, 429);
  await status.arrayBuffer();

  // Other principals have their own count; the anonymous client's is not touched by them.
  for (const key of ['alice-key', 'bob-key']) {
    for (let i = 0; i < 2; i++) {
      const res = await fetch(base + '/api/request/b', { headers: { 'x-api-key': key } });
      assert.equal(res.status, 200);
      if (i === 1) assert.match(res.headers.get('ratelimit') ?? '', /^"default";r=1;/, 'its own count');
      await res.arrayBuffer();
    }
  }
  // An API with its own limit is counted apart; one without a limit is never refused.
  const own1 = await fetch(base + '/api/request/own/x');
  assert.equal(own1.status, 200);
  assert.equal(own1.headers.get('ratelimit-policy'), '"/own";q=1;w=60');
  await own1.arrayBuffer();
  const own2 = await fetch(base + '/api/request/own/x');
  assert.equal(own2.status, 429);
  assert.equal(own2.headers.get('ratelimit-policy'), '"/own";q=1;w=60');
  await own2.arrayBuffer();
  for (let i = 0; i < 10; i++) {
    const res = await fetch(base + '/api/request/free');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('ratelimit'), null);
    await res.arrayBuffer();
  }
  // Health and metrics are never limited (probes and scrapers must see the truth).
  assert.equal((await fetch(base + '/healthz')).status, 200);
  assert.equal((await fetch(base + '/metrics')).status, 200);

  // Nothing refused reached a saga: 3 + alice and bob twice each + own once + free 10 times.
  const paths = svc.calls.map((c) => c.req.path);
  assert.deepEqual(
    paths.filter((p) => p === '/a'),
    ['/a', '/a', '/a'],
  );
  assert.equal(paths.length, 3 + 4 + 1 + 10);
  assert.ok(!paths.includes('/feed'));
  await close();
});

test('a stream counts once per connection, so every reconnect counts; its 200 carries the headers', async () => {
  const svc = feedService(2, 2);
  const { base, close } = await startGateway(svc, { limits: { rate: { max: 2, windowMs: 60_000 } } });
  for (let i = 0; i < 2; i++) {
    const res = await fetch(base + '/api/stream/feed');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    // From the second connection on, half the quota is used: the stream's 200 carries the headers.
    if (i === 1) assert.match(res.headers.get('ratelimit') ?? '', /^"default";r=0;/);
    assert.ok(res.headers.get('x-request-id'));
    assert.match(await res.text(), /event: end/);
  }
  const third = await fetch(base + '/api/stream/feed', { headers: { 'last-event-id': 'whatever' } });
  assert.equal(third.status, 429);
  assert.equal((await problemOf(third))['code'], 'RATE_LIMITED');
  assert.equal(svc.calls.length, 2, 'the refused reconnect ran nothing');
  await close();
});

test('the count starts again after the window', async () => {
  const svc = new ScriptedService(() => ok({}));
  const { base, close } = await startGateway(svc, { limits: { rate: { max: 1, windowMs: 2000 } } });
  const status = async () => {
    const res = await fetch(base + '/api/request/x');
    await res.arrayBuffer();
    return res.status;
  };
  assert.equal(await status(), 200);
  // a window long enough that a loaded machine cannot let it pass between two requests
  assert.equal(await status(), 429);
  await delay(2100);
  assert.equal(await status(), 200);
  assert.equal(svc.calls.length, 2);
  await close();
});

test('configuration: on by default (200 per 10 s), `rate: false` turns it off, per-API limits compile', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sagaway-rate-'));
  try {
    const saga = {
      id: 's',
      path: '/s',
      steps: [
        { id: 'start', type: 'start', links: [{ to: 'ok' }] },
        { id: 'ok', type: 'success' },
      ],
    };
    const write = (name: string, gateway: unknown) => {
      writeFileSync(join(dir, name), JSON.stringify({ gateway, runners: { r: { sagas: [saga] } } }));
      return join(dir, name);
    };
    const dflt = (await loadConfig(write('a.json', { apis: [{ path: '/', runner: 'r' }] }))).settings.gateway;
    assert.deepEqual(dflt.limits.rate, { max: 200, windowMs: 10_000 });
    assert.equal(dflt.apis[0]!.rate, undefined);
    const off = (await loadConfig(write('b.json', { limits: { rate: false } }))).settings.gateway;
    assert.equal(off.limits.rate, undefined);
    const own = (
      await loadConfig(
        write('c.json', {
          limits: { rate: { max: 50, window: '1m', redis: 'redis://127.0.0.1:6379' } },
          apis: [
            { path: '/a', runner: 'r', rate: { max: 5, window: '2s' } },
            { path: '/b', runner: 'r', rate: false },
          ],
        }),
      )
    ).settings.gateway;
    assert.deepEqual(own.limits.rate, { max: 50, windowMs: 60_000, redis: 'redis://127.0.0.1:6379' });
    assert.deepEqual(own.apis[0]!.rate, { max: 5, windowMs: 2000 });
    assert.equal(own.apis[1]!.rate, false);
    await assert.rejects(loadConfig(write('d.json', { limits: { rate: { max: 0 } } })));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('trustProxy: the client is the address the proxy appended, not an X-Forwarded-For entry the client wrote', async () => {
  const svc = new ScriptedService(() => ok({}));
  const { base, close } = await startGateway(svc, {
    apis,
    trustProxy: true,
    limits: { rate: { max: 1, windowMs: 60_000 } },
  });
  try {
    // One client (203.0.113.5, appended by the proxy) writes a new first entry on every request.
    const from = (spoof: string) =>
      fetch(base + '/api/request/a', { headers: { 'x-forwarded-for': `${spoof}, 203.0.113.5` } });
    assert.equal((await from('10.0.0.1')).status, 200);
    assert.equal((await from('10.0.0.2')).status, 429, 'the same client, whatever it writes first');
    const other = await fetch(base + '/api/request/a', { headers: { 'x-forwarded-for': '198.51.100.7' } });
    assert.equal(other.status, 200, 'another client behind the proxy has its own count');
  } finally {
    await close();
  }
});

test('trustProxy as a list: rotating X-Forwarded-For from an unlisted peer is one client; a listed proxy names its clients', async () => {
  const svc = new ScriptedService(() => ok({}));
  const gw = await createGateway({
    settings: settingsWith({
      apis,
      trustProxy: ['10.0.0.2', '192.168.7.0/24'],
      limits: { rate: { max: 5, windowMs: 60_000 } },
    }),
    service: svc,
    log: silentLogger(),
  });
  try {
    const from = (remoteAddress: string, xff: string) =>
      gw.app.inject({ url: '/api/request/a', headers: { 'x-forwarded-for': xff }, remoteAddress });
    // A client that reaches the gateway directly writes a new address on every request.
    let served = 0;
    for (let i = 0; i < 300; i++) if ((await from('203.0.113.5', `198.51.100.${i % 250}`)).statusCode === 200) served++;
    assert.equal(served, 5, 'one client: its own 5, whatever X-Forwarded-For says');
    // Behind a listed proxy (an address, a CIDR) each named client has its own count.
    for (let i = 0; i < 20; i++) {
      const proxy = i % 2 === 0 ? '10.0.0.2' : '192.168.7.40';
      assert.equal((await from(proxy, `spoof, 198.18.0.${i}`)).statusCode, 200, `client ${i} behind ${proxy}`);
    }
    // A chain of listed proxies: the client is the last entry not written by one of them.
    const chained = () => from('10.0.0.2', '198.18.1.1, 192.168.7.9');
    for (let i = 0; i < 5; i++) assert.equal((await chained()).statusCode, 200);
    assert.equal((await chained()).statusCode, 429, '198.18.1.1 behind two proxies is one client');
  } finally {
    await gw.close();
  }
});

test('trustProxy: true warns at start when the gateway listens beyond this machine; a list or loopback does not', async () => {
  const warnings = async (trustProxy: boolean | string[], host: string) => {
    const { log, lines } = capturingLogger();
    const gw = await createGateway({
      settings: settingsWith({ apis, trustProxy }),
      service: new ScriptedService(() => ok({})),
      log,
    });
    try {
      await gw.listen(0, host);
    } finally {
      await gw.close();
    }
    return lines.filter((l) => l.includes('trustProxy'));
  };
  const wide = await warnings(true, '0.0.0.0');
  assert.equal(wide.length, 1);
  assert.equal(JSON.parse(wide[0]!).level, 40, 'logged at warn');
  assert.match(wide[0]!, /listens on 0\.0\.0\.0: any client that connects directly chooses its own address/);
  assert.deepEqual(await warnings(true, '127.0.0.1'), []);
  assert.deepEqual(await warnings(['127.0.0.1'], '0.0.0.0'), []);
  assert.deepEqual(await warnings(false, '0.0.0.0'), []);
});

test('trustProxy in a file: a list of addresses and CIDRs; anything else is an error at its place', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sagaway-trust-'));
  try {
    const write = (name: string, trustProxy: unknown) => {
      const f = join(dir, name);
      writeFileSync(f, JSON.stringify({ gateway: { trustProxy, console: { enabled: false } } }));
      return f;
    };
    const list = ['10.0.0.2', '10.1.0.0/16', 'fd00::/8', '::1', 'loopback'];
    assert.deepEqual((await loadConfig(write('ok.json', list))).settings.gateway.trustProxy, list);
    for (const bad of [['10.0.0.300'], ['10.0.0.0/33'], ['0.0.0.0/0'], ['proxy.example'], ['10.0.0.0/x'], []]) {
      await assert.rejects(
        loadConfig(write('bad.json', bad)),
        (err: Error) => {
          if (bad.length > 0) assert.match(err.message, /gateway\.trustProxy\[0\]: ".*" is not an address, a CIDR/);
          return true;
        },
        JSON.stringify(bad),
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
