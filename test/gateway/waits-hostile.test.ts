import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { SignJWT } from 'jose';
import { createGateway, type Gateway } from '../../src/gateway/server.js';
import { startTestHost, type TestHost } from '../../src/testing/index.js';
import { postTo, statusOf } from './waits-client.js';
import { capturingLogger } from '../security/inject-canary.js';

/**
 * Waits under hostile clients (review 2): replayed correlation signals, out-of-range timers,
 * concurrent decisions, poisoned and oversized signal bodies, tokens in the access log.
 * SQLite journal, a clock the test moves.
 */

const KEYS = { alice: 'key-alice-0123456789', bob: 'key-bob-0123456789', hook: 'key-hook-0123456789' };
const sha = (k: string) => createHash('sha256').update(k).digest('hex');
const JWT_SECRET = 'a jwt secret of the review, 32 bytes at least';
const jwt = (sub: string, roles: string[] = []) =>
  new SignJWT({ roles })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(new TextEncoder().encode(JWT_SECRET));

const CONFIG = `
gateway:
  limits: { bodyLimit: 8kb }
  apis:
    - { path: /orders, runner: r, methods: [POST] }
    - { path: /timers, runner: r, methods: [POST] }
    - { path: /sleeps, runner: r, methods: [POST] }
    - { path: /expenses, runner: r, methods: [POST] }
    - { path: /pings, runner: r, methods: [POST] }
  auth:
    jwt: { secret: "${JWT_SECRET}" }
    apiKeys:
      - { name: alice, sha256: "${sha(KEYS.alice)}", roles: [user] }
      - { name: bob, sha256: "${sha(KEYS.bob)}", roles: [user, manager] }
      - { name: hook, sha256: "${sha(KEYS.hook)}", roles: [payments] }
states:
  jr: { type: sqlite, file: ./journal.db }
runners:
  r:
    journal: jr
    sagas:
      - id: order
        path: /orders
        methods: [POST]
        steps:
          - { id: start, type: start, links: [{ to: pay }] }
          - id: pay
            type: wait
            signal: { name: payment, key: parameters.order, roles: [payments] }
            timeout: 1h
            outputElement: $.payment
            links: [{ to: ok, when: [SIGNAL] }, { to: late, when: ['*'] }]
          - { id: ok, type: success }
          - { id: late, type: fail, error: { code: LATE, http: 504 } }
      - id: timer
        path: /timers
        methods: [POST]
        steps:
          - { id: start, type: start, links: [{ to: nap }] }
          - { id: nap, type: wait, until: parameters.when, links: [{ to: ok, when: [SUCCESS] }, { to: bad, when: ['*'] }] }
          - { id: ok, type: success }
          - { id: bad, type: fail, error: { code: BAD_TIME, http: 400 } }
      - id: sleep
        path: /sleeps
        methods: [POST]
        steps:
          - { id: start, type: start, links: [{ to: nap }] }
          - { id: nap, type: wait, for: 1h, links: [{ to: ok, when: [SUCCESS] }] }
          - { id: ok, type: success }
      - id: ping
        path: /pings
        methods: [POST]
        steps:
          - { id: start, type: start, links: [{ to: pong }] }
          - id: pong
            type: wait
            signal: { name: ping, key: parameters.id, roles: [user] }
            timeout: 1h
            links: [{ to: ok, when: ['*'] }]
          - { id: ok, type: success }
      - id: expense
        path: /expenses
        methods: [POST]
        steps:
          - { id: start, type: start, links: [{ to: approval }] }
          - id: approval
            type: wait
            signal: { name: approval, roles: [manager] }
            approvals: { required: 2 }
            timeout: 1h
            links: [{ to: ok, when: [SIGNAL] }, { to: no, when: ['*'] }]
          - { id: ok, type: success }
          - { id: no, type: fail, error: { code: NO, http: 409 } }
`;

interface World {
  host: TestHost;
  gateway: Gateway;
  clock: { now(): number; advance(ms: number): void };
  lines: string[];
}

async function world(): Promise<World> {
  let t = Date.UTC(2026, 0, 1);
  const clock = { now: () => t, advance: (ms: number) => void (t += ms) };
  const host = await startTestHost(CONFIG, { clock });
  const { log, lines } = capturingLogger();
  const gateway = await createGateway({
    settings: host.settings,
    service: host.host,
    log,
    status: host.host.statusReader(),
    waits: host.host.waits.signals(),
  });
  return { host, gateway, clock, lines };
}

const as = (who: keyof typeof KEYS | undefined) => (who ? { 'x-api-key': KEYS[who] } : {});

function post(w: World, url: string, who: keyof typeof KEYS | undefined, body?: unknown) {
  return postTo(w.gateway, url, as(who), body);
}

function status(w: World, runId: string, who: keyof typeof KEYS = 'alice') {
  return statusOf(w.gateway, runId, as(who));
}

test('a keyed signal refused 404 (ttl 0, no wait yet) is applied when its sender retries it once the wait exists', async () => {
  const w = await world();
  try {
    // a webhook comes before the run parks: 404, not kept (ttl 0)
    const early = await post(w, '/api/signals/payment', 'hook', { key: 'o1', data: { amount: 5 }, messageId: 'evt-1' });
    assert.equal(early.status, 404);
    assert.equal(early.body['code'], 'WAIT_NOT_FOUND');
    // the run parks; the provider retries the 404 with the same event id
    const res = await post(w, '/api/request/orders', 'alice', { order: 'o1' });
    assert.equal(res.status, 202);
    const runId = String(res.headers['x-request-id']);
    const retry = await post(w, '/api/signals/payment', 'hook', { key: 'o1', data: { amount: 5 }, messageId: 'evt-1' });
    // nothing was ever applied or kept under evt-1: the retry must apply (not "200 duplicate KEPT")
    assert.equal(retry.status, 202, JSON.stringify(retry.body));
    assert.equal(retry.body['status'], 'APPLIED');
    assert.equal(retry.body['runId'], runId);
    await w.host.host.waits.poll();
    const done = await status(w, runId);
    assert.equal(done.outcome, 'SUCCESS');
    assert.deepEqual(done.response?.['payment'], { amount: 5 });
    // and now it is a duplicate
    const dup = await post(w, '/api/signals/payment', 'hook', { key: 'o1', data: { amount: 5 }, messageId: 'evt-1' });
    assert.equal(dup.status, 200);
    assert.equal(dup.body['duplicate'], true);
    assert.equal(dup.body['status'], 'APPLIED');
  } finally {
    await w.gateway.close();
    await w.host.close();
  }
});

test('two concurrent signals to one wait: one applies, the run resumes once', async () => {
  const w = await world();
  try {
    const res = await post(w, '/api/request/orders', 'alice', { order: 'o2' });
    const runId = String(res.headers['x-request-id']);
    const url = `/api/runs/${runId}/signals/payment`;
    const all = await Promise.all(Array.from({ length: 8 }, (_, i) => post(w, url, 'hook', { amount: i })));
    const applied = all.filter((r) => r.status === 202);
    assert.equal(applied.length, 1, JSON.stringify(all.map((r) => [r.status, r.body['code']])));
    for (const r of all)
      if (r.status !== 202) assert.ok(['WAIT_RESOLVED', 'WAIT_NOT_FOUND'].includes(String(r.body['code'])));
    await Promise.all([w.host.host.waits.poll(), w.host.host.waits.poll()]);
    const done = await status(w, runId);
    assert.equal(done.outcome, 'SUCCESS');
  } finally {
    await w.gateway.close();
    await w.host.close();
  }
});

test('signal bodies: __proto__ and deep nesting are refused before they reach a wait', async () => {
  const w = await world();
  try {
    const res = await post(w, '/api/request/orders', 'alice', { order: 'o3' });
    const runId = String(res.headers['x-request-id']);
    const url = `/api/runs/${runId}/signals/payment`;
    const proto = await post(w, url, 'hook', '{"amount":1,"__proto__":{"polluted":true}}');
    assert.equal(proto.status, 400);
    const ctor = await post(w, url, 'hook', '{"constructor":{"prototype":{"polluted":true}}}');
    assert.equal(ctor.status, 400);
    const deep = await post(w, url, 'hook', '['.repeat(1000) + ']'.repeat(1000));
    assert.equal(deep.status, 400);
    const big = await post(w, url, 'hook', { pad: 'x'.repeat(200 * 1024) });
    assert.equal(big.status, 413);
    const keyed = await post(w, '/api/signals/payment', 'hook', '{"key":"o3","data":{"__proto__":{"x":1}}}');
    assert.equal(keyed.status, 400);
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
    assert.equal((await status(w, runId)).status, 'WAITING');
  } finally {
    await w.gateway.close();
    await w.host.close();
  }
});

test('a timer whose until is out of the range of a date fails the run cleanly, and leaves no wait behind', async () => {
  const w = await world();
  try {
    for (const when of [1e300, -1e300, 8.64e15 + 1]) {
      const res = await post(w, '/api/request/timers', 'alice', { when });
      const runId = String(res.headers['x-request-id']);
      assert.notEqual(res.status, 202, `until ${when} parked: ${JSON.stringify(res.body)}`);
      assert.ok(res.status < 500 || res.body['code'] === 'EXPRESSION_FAILED', JSON.stringify(res.body));
      const s = await status(w, runId);
      assert.equal(s.status, 'DONE', JSON.stringify(s));
    }
    assert.equal((await w.host.host.waits.stats()).parked, 0, 'no wait row left behind');
  } finally {
    await w.gateway.close();
    await w.host.close();
  }
});

test('a callback token never reaches the access log (page, decision, query)', async () => {
  const w = await world();
  try {
    const token = 'eyJ3IjoieCJ9.AAAAAAAAAAAAAAAAAAAAAA';
    for (const path of [`/api/callbacks/${token}`, `/api/callbacks/${token}?decision=reject`]) {
      await w.gateway.app.inject({ method: 'GET', url: path });
      await w.gateway.app.inject({ method: 'POST', url: path });
    }
    await new Promise((r) => setTimeout(r, 20));
    const leaked = w.lines.filter((l) => l.includes('AAAAAAAAAAAAAAAAAAAAAA'));
    assert.deepEqual(leaked, []);
  } finally {
    await w.gateway.close();
    await w.host.close();
  }
});

test('a cancel racing the poller that takes a due timer: a 202 CANCELLED is never answered for a run that goes on', async () => {
  const w = await world();
  try {
    const lies: string[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await post(w, '/api/request/sleeps', 'alice', {});
      assert.equal(res.status, 202);
      const runId = String(res.headers['x-request-id']);
      w.clock.advance(3600_000); // the timer is due: a poller may take it at any moment
      const [, cancel] = await Promise.all([
        w.host.host.waits.poll(),
        (async () => {
          for (let k = 0; k < i % 6; k++) await new Promise((r) => setImmediate(r));
          return post(w, `/api/runs/${runId}/cancel`, 'alice');
        })(),
      ]);
      await w.host.host.waits.poll();
      const s = await status(w, runId);
      assert.equal(s.status, 'DONE');
      if (cancel.status === 202 && s.error?.code !== 'RUN_CANCELLED') lies.push(`${i}: cancel 202, run ${s.outcome}`);
    }
    assert.deepEqual(lies, []);
  } finally {
    await w.gateway.close();
    await w.host.close();
  }
});

test('a token holder whose subject spells an API key\'s principal ("apikey:alice") cannot cancel that key\'s run', async () => {
  const w = await world();
  try {
    const res = await post(w, '/api/request/sleeps', 'alice', {});
    assert.equal(res.status, 202);
    const runId = String(res.headers['x-request-id']);
    const forged = await w.gateway.app.inject({
      method: 'POST',
      url: `/api/runs/${runId}/cancel`,
      headers: { authorization: `Bearer ${await jwt('apikey:alice', ['user'])}` },
    });
    assert.equal(forged.statusCode, 403, forged.body);
    assert.equal((await status(w, runId)).status, 'WAITING');
    // the key itself still may
    assert.equal((await post(w, `/api/runs/${runId}/cancel`, 'alice')).status, 202);
  } finally {
    await w.gateway.close();
    await w.host.close();
  }
});

test("a cross-site browser request (no preflight: no body, or a form) never decides with the victim's cookie", async () => {
  const w = await world();
  try {
    const res = await post(w, '/api/request/expenses', 'alice', {});
    assert.equal(res.status, 202);
    const runId = String(res.headers['x-request-id']);
    // what a page elsewhere can make a browser send with its cookies, without a preflight:
    // fetch(url, { method: 'POST', mode: 'no-cors', credentials: 'include' }) and a form post
    const crossSite = async (url: string, who: string, roles: string[], form = false) =>
      w.gateway.app.inject({
        method: 'POST',
        url,
        headers: {
          cookie: `sagaway_token=${await jwt(who, roles)}`,
          origin: 'https://evil.example',
          'sec-fetch-site': 'cross-site',
          ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
        ...(form ? { payload: '' } : {}),
      });
    const approve = await crossSite(`/api/runs/${runId}/signals/approval`, 'mallory-victim', ['user', 'manager']);
    assert.notEqual(approve.statusCode, 202, approve.body);
    const cancel = await crossSite(`/api/runs/${runId}/cancel`, 'alice', ['user']);
    assert.notEqual(cancel.statusCode, 202, cancel.body);
    // a callback link's holder may decide as the link ("callback"), never as a victim whose cookie a form carried
    const row = (await [...w.host.host.waits.stores.values()][0]!.byRun(runId))!;
    const token = w.host.host.waits.tokens.sign({
      waitId: row.waitId,
      runId,
      step: row.step,
      visit: row.visit,
      expiresAt: row.dueAt,
    });
    const link = await crossSite(`/api/callbacks/${token}`, 'carol-victim', ['user', 'manager'], true);
    assert.equal(link.statusCode, 202, link.body);
    assert.deepEqual((await w.host.host.waits.stores.values().next().value!.byRun(runId))!.approvals, ['callback']);
    // the same, from the callback page itself (same origin): the manager's own approval
    const own = await w.gateway.app.inject({
      method: 'POST',
      url: `/api/callbacks/${token}`,
      headers: {
        cookie: `sagaway_token=${await jwt('carol', ['user', 'manager'])}`,
        'sec-fetch-site': 'same-origin',
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: '',
    });
    assert.equal(own.statusCode, 202, own.body);
    assert.equal((JSON.parse(own.body) as { status: string }).status, 'SIGNAL');
  } finally {
    await w.gateway.close();
    await w.host.close();
  }
});

test('remembered correlation signals are deleted once past their expiry (the longer of ttl and 24 h)', async () => {
  const w = await world();
  try {
    for (let i = 0; i < 5; i++) {
      const res = await post(w, '/api/signals/payment', 'hook', { key: `nobody-${i}`, data: { amount: 1 } });
      assert.equal(res.status, 404);
    }
    assert.equal((await post(w, '/api/signals/payment', 'hook', { key: 'later', data: {}, ttl: '1h' })).status, 202);
    const store = [...w.host.host.waits.stores.values()][0]! as unknown as {
      db(): Promise<{ query(sql: string, p: unknown[]): Promise<Record<string, unknown>[]> }>;
    };
    const count = async () =>
      Number((await (await store.db()).query('SELECT COUNT(*) AS n FROM "jr_signals"', []))[0]!['n']);
    assert.equal(await count(), 6);
    w.clock.advance(25 * 3600_000);
    await w.host.host.waits.poll();
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(await count(), 0, 'every signal row lives forever: nothing prunes the signals table');
  } finally {
    await w.gateway.close();
    await w.host.close();
  }
});

test('a messageId taken on one signal name (by a sender of its roles) does not swallow the same id on another', async () => {
  const w = await world();
  try {
    // alice may send "ping" signals, not payments; she keeps one under the id a payment provider will use
    const squat = await post(w, '/api/signals/ping', 'alice', { key: 'o9', data: {}, messageId: 'evt_9', ttl: '2h' });
    assert.equal(squat.status, 202);
    assert.equal(squat.body['status'], 'KEPT');
    const res = await post(w, '/api/request/orders', 'alice', { order: 'o9' });
    const runId = String(res.headers['x-request-id']);
    const paid = await post(w, '/api/signals/payment', 'hook', { key: 'o9', data: { amount: 9 }, messageId: 'evt_9' });
    assert.equal(paid.status, 202, JSON.stringify(paid.body));
    assert.deepEqual(paid.body, { messageId: 'evt_9', status: 'APPLIED', duplicate: false, runId });
    await w.host.host.waits.poll();
    assert.equal((await status(w, runId)).outcome, 'SUCCESS');
    // each name still applies an id once
    const again = await post(w, '/api/signals/payment', 'hook', { key: 'o9', data: { amount: 9 }, messageId: 'evt_9' });
    assert.deepEqual(again.body, { messageId: 'evt_9', status: 'APPLIED', duplicate: true });
    const ping = await post(w, '/api/signals/ping', 'alice', { key: 'o9', data: {}, messageId: 'evt_9', ttl: '2h' });
    assert.deepEqual(ping.body, { messageId: 'evt_9', status: 'KEPT', duplicate: true });
  } finally {
    await w.gateway.close();
    await w.host.close();
  }
});

test('the wait routes keep to gateway.limits.bodyLimit when it is below their own limit', async () => {
  const w = await world();
  try {
    const res = await post(w, '/api/request/orders', 'alice', { order: 'o10' });
    const runId = String(res.headers['x-request-id']);
    const body = { amount: 1, pad: 'x'.repeat(16 * 1024) }; // 16 KB: over the 8 KB of this gateway
    assert.equal((await post(w, '/api/request/orders', 'alice', { order: 'o11', ...body })).status, 413);
    assert.equal((await post(w, `/api/runs/${runId}/signals/payment`, 'hook', body)).status, 413);
    assert.equal((await post(w, '/api/signals/payment', 'hook', { key: 'o10', data: body })).status, 413);
    assert.equal((await status(w, runId)).status, 'WAITING');
  } finally {
    await w.gateway.close();
    await w.host.close();
  }
});
