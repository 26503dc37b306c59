import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { silentLogger } from '../../src/core/logger.js';
import { createGateway, type Gateway } from '../../src/gateway/server.js';
import { startTestHost, type TestHost } from '../../src/testing/index.js';
import { postTo, statusOf } from './waits-client.js';
import { waitMetrics } from '../../src/runner/waits/metrics.js';

/**
 * Waits through the gateway, on the real engine and a SQLite journal (issue 21): the 202 of a
 * parked run, approvals by distinct principals, signals by run, by correlation key (before and
 * after the wait exists, twice), callback links (page, reuse, expiry, reject), timeouts and
 * cancels with their compensations. Time is a clock the test moves.
 */

const KEYS = {
  alice: 'key-alice-0123456789',
  bob: 'key-bob-0123456789',
  carol: 'key-carol-0123456789',
  hook: 'key-hook-0123456789',
};
const sha = (k: string) => createHash('sha256').update(k).digest('hex');

const CONFIG = `
gateway:
  apis:
    - { path: /expenses, runner: r, methods: [POST] }
  auth:
    apiKeys:
      - { name: alice, sha256: "${sha(KEYS.alice)}", roles: [user] }
      - { name: bob, sha256: "${sha(KEYS.bob)}", roles: [user, manager] }
      - { name: carol, sha256: "${sha(KEYS.carol)}", roles: [user, manager] }
      - { name: hook, sha256: "${sha(KEYS.hook)}", roles: [payments] }
states:
  jr: { type: sqlite, file: ./journal.db }
runners:
  r:
    handlers: [./office.mjs]
    journal: jr
    sagas:
      - id: expense
        path: /expenses
        methods: [POST]
        steps:
          - { id: start, type: start, links: [{ to: reserve }] }
          - id: reserve
            type: event
            eventMeta: { handler: office, action: Reserve, version: 0, outputElement: $.reserved }
            compensate: { eventMeta: { handler: office, action: Release, version: 0 } }
            links: [{ to: approval }]
          - id: approval
            type: wait
            signal: { name: approval, roles: [manager] }
            approvals: { required: 2 }
            timeout: 72h
            outputElement: $.approval
            notify: { eventMeta: { handler: office, action: Mail, version: 0 } }
            links:
              - { to: pay, when: [SIGNAL] }
              - { to: rejected, when: [REJECTED] }
              - { to: late, when: [TIMEOUT] }
          - id: pay
            type: wait
            signal:
              name: payment
              key: parameters.order
              roles: [payments]
              schema: { type: object, required: [amount], properties: { amount: { type: number } } }
            timeout: 1h
            outputElement: $.payment
            links: [{ to: ok, when: [SIGNAL] }, { to: late, when: ['*'] }]
          - { id: ok, type: success }
          - { id: rejected, type: fail, error: { code: EXPENSE_REJECTED, http: 409 } }
          - { id: late, type: fail, error: { code: EXPENSE_LATE, http: 504 } }
`;

const OFFICE = `
const g = globalThis.__office ??= { mails: [], released: [] };
export default {
  name: 'office',
  actions: {
    Reserve: { 0: (input) => ({ order: input.parameters.order }) },
    Release: { 0: (input, ctx) => { g.released.push(input.parameters.order); return {}; } },
    Mail: { 0: (input) => { g.mails.push({ order: input.parameters.order, wait: input.wait }); return {}; } },
  },
};
`;
const office = () =>
  (
    globalThis as unknown as {
      __office: { mails: { order: string; wait: { callbacks: Record<string, string> } }[]; released: string[] };
    }
  ).__office;

interface World {
  host: TestHost;
  gateway: Gateway;
  clock: { now(): number; advance(ms: number): void };
}

async function world(maxPerClient?: number): Promise<World> {
  let t = Date.UTC(2026, 0, 1);
  const clock = { now: () => t, advance: (ms: number) => void (t += ms) };
  const config =
    maxPerClient === undefined
      ? CONFIG
      : CONFIG.replace('gateway:\n', `gateway:\n  stream: { maxPerClient: ${maxPerClient} }\n`);
  const host = await startTestHost(config, { files: { 'office.mjs': OFFICE }, clock });
  const gateway = await createGateway({
    settings: host.settings,
    service: host.host,
    log: silentLogger(),
    status: host.host.statusReader(),
    waits: host.host.waits.signals(),
  });
  return { host, gateway, clock };
}

const as = (who: keyof typeof KEYS | undefined) => (who ? { 'x-api-key': KEYS[who] } : {});

function post(w: World, url: string, who: keyof typeof KEYS | undefined, body?: unknown) {
  return postTo(w.gateway, url, as(who), body);
}

function status(w: World, runId: string, who: keyof typeof KEYS = 'alice') {
  return statusOf(w.gateway, runId, as(who));
}

/** Start an expense as `who`; returns its run id (the 202's Location names it). */
async function start(w: World, order: string, who: keyof typeof KEYS = 'alice'): Promise<string> {
  const res = await post(w, '/api/request/expenses', who, { order });
  assert.equal(res.status, 202);
  const runId = String(res.headers['x-request-id']);
  assert.equal(res.headers['location'], `/api/status/${runId}`);
  assert.equal(res.body['status'], 'WAITING');
  return runId;
}

const mailOf = (order: string) => office().mails.find((m) => m.order === order)!;

test('approval by two managers, then a payment by correlation key: SUCCESS with both at their outputElement', async () => {
  const w = await world();
  try {
    const runId = await start(w, 'o1');
    const parked = await status(w, runId);
    assert.equal(parked.status, 'WAITING');
    assert.equal(parked.waitingOn?.signal, 'approval');
    // the notify event got the callback URLs once the wait was stored
    const links = mailOf('o1').wait.callbacks;
    assert.match(links['approve']!, /^\/api\/callbacks\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);

    // the confirmation page: a GET decides nothing, under the strict CSP
    const page = await w.gateway.app.inject({ method: 'GET', url: links['approve']! });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-security-policy']), /default-src 'none'.*form-action 'self'/);
    assert.match(page.body, /<form method="post"/);
    assert.doesNotMatch(page.body, /<script/);

    assert.equal((await post(w, `/api/runs/${runId}/signals/approval`, 'alice', {})).body['code'], 'FORBIDDEN');
    assert.equal((await post(w, `/api/runs/${runId}/signals/approval`, undefined, {})).status, 401);
    const first = await post(w, `/api/runs/${runId}/signals/approval`, 'bob', { comment: 'fine' });
    assert.equal(first.status, 202);
    assert.deepEqual(first.body, { runId, status: 'APPROVING', approvals: 1, required: 2 });
    assert.equal((await post(w, `/api/runs/${runId}/signals/approval`, 'bob', {})).body['code'], 'ALREADY_APPROVED');
    const second = await post(w, links['approve']!, 'carol', {});
    assert.equal(second.status, 202);
    assert.equal(second.body['status'], 'SIGNAL');
    // the link is single use
    const again = await post(w, links['approve']!, 'carol', {});
    assert.equal(again.status, 409);
    assert.equal(again.body['code'], 'WAIT_RESOLVED');

    await w.host.host.waits.poll();
    const paying = await status(w, runId);
    assert.equal(paying.status, 'WAITING');
    assert.equal(paying.waitingOn?.signal, 'payment');

    const bad = await post(w, '/api/signals/payment', 'hook', {
      key: 'o1',
      data: { amount: 'ten' },
      messageId: 'pay-1',
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.body['code'], 'SIGNAL_INVALID');
    assert.equal(
      (await post(w, '/api/signals/payment', 'bob', { key: 'o1', data: { amount: 10 }, messageId: 'pay-x' })).status,
      403,
    );
    const paid = await post(w, '/api/signals/payment', 'hook', { key: 'o1', data: { amount: 10 }, messageId: 'pay-2' });
    assert.equal(paid.status, 202);
    assert.deepEqual(paid.body, { messageId: 'pay-2', status: 'APPLIED', duplicate: false, runId });
    const dup = await post(w, '/api/signals/payment', 'hook', { key: 'o1', data: { amount: 10 }, messageId: 'pay-2' });
    assert.equal(dup.status, 200);
    assert.equal(dup.body['duplicate'], true);

    await w.host.host.waits.poll();
    const done = await status(w, runId);
    assert.equal(done.outcome, 'SUCCESS');
    assert.deepEqual(done.response?.['payment'], { amount: 10 });
    assert.deepEqual((done.response?.['approval'] as { approvers: string[] }).approvers, [
      'apikey:bob',
      'apikey:carol',
    ]);
    assert.ok(!office().released.includes('o1'), 'no compensation on success');
  } finally {
    await w.gateway.close();
    await w.host.close();
  }
});

test('a payment sent before the run waits is kept for its ttl and consumed by the wait when it parks', async () => {
  const w = await world();
  try {
    const kept = await post(w, '/api/signals/payment', 'hook', {
      key: 'o2',
      data: { amount: 3 },
      messageId: 'early',
      ttl: '2h',
    });
    assert.equal(kept.status, 202);
    assert.equal(kept.body['status'], 'KEPT');
    assert.equal((await w.host.host.waits.stats()).kept, 1);
    waitMetrics(w.gateway.metrics.registry, () => w.host.host.waits.stats());
    const other = await start(w, 'o2b');
    const metrics = (await w.gateway.app.inject({ method: 'GET', url: '/metrics' })).body;
    assert.match(metrics, /^sagaway_signals_kept 1$/m);
    assert.match(metrics, /^sagaway_waits_parked 1$/m);
    assert.match(metrics, /^sagaway_waits_due 0$/m);
    assert.equal((await post(w, `/api/runs/${other}/cancel`, 'alice')).status, 202);
    await w.host.host.waits.poll();
    const none = await post(w, '/api/signals/payment', 'hook', { key: 'nobody', data: { amount: 3 } });
    assert.equal(none.status, 404);
    assert.equal(none.body['code'], 'WAIT_NOT_FOUND');

    const runId = await start(w, 'o2');
    await post(w, `/api/runs/${runId}/signals/approval`, 'bob', {});
    await post(w, `/api/runs/${runId}/signals/approval`, 'carol', {});
    await w.host.host.waits.poll(); // resumes the approval; the run parks on payment and takes the kept signal
    await w.host.host.waits.poll(); // resumes the payment
    const done = await status(w, runId);
    assert.equal(done.outcome, 'SUCCESS');
    assert.deepEqual(done.response?.['payment'], { amount: 3 });
    assert.equal((await w.host.host.waits.stats()).kept, 0);
  } finally {
    await w.gateway.close();
    await w.host.close();
  }
});

test('self-approval, a rejection by link, an expired link and a timeout: each ends as the saga says, compensated', async () => {
  const w = await world();
  try {
    // bob is a manager, but this is his own expense
    const own = await start(w, 'o3', 'bob');
    const self = await post(w, `/api/runs/${own}/signals/approval`, 'bob', {});
    assert.equal(self.status, 403);
    assert.equal(self.body['code'], 'SELF_APPROVAL');

    // a rejection through the link needs no credential: the link is the permission
    const rejected = await post(w, `${mailOf('o3').wait.callbacks['reject']!}`, undefined);
    assert.equal(rejected.status, 202);
    assert.equal(rejected.body['status'], 'REJECTED');
    await w.host.host.waits.poll();
    const r = await status(w, own, 'bob');
    assert.equal(r.outcome, 'FAIL');
    assert.equal(r.error?.code, 'EXPENSE_REJECTED');
    assert.ok(office().released.includes('o3'), 'the reservation was released');

    const late = await start(w, 'o4');
    w.clock.advance(72 * 3600_000);
    const expired = await post(w, mailOf('o4').wait.callbacks['approve']!, 'carol', {});
    assert.equal(expired.status, 410);
    assert.equal(expired.body['code'], 'CALLBACK_EXPIRED');
    assert.equal(await w.host.host.waits.poll(), 1);
    const t = await status(w, late);
    assert.equal(t.error?.code, 'EXPENSE_LATE');
    assert.ok(office().released.includes('o4'));

    const forged = await post(w, '/api/callbacks/eyJ3IjoieCJ9.AAAAAAAAAAAAAAAAAAAAAA', undefined);
    assert.equal(forged.status, 404);
    assert.equal(forged.body['code'], 'WAIT_NOT_FOUND');
    assert.equal((await post(w, '/api/runs/no-such-run/signals/approval', 'bob', {})).status, 404);
  } finally {
    await w.gateway.close();
    await w.host.close();
  }
});

test('cancel wakes the waiting run with CANCELLED: RUN_CANCELLED, then its compensations', async () => {
  const w = await world();
  try {
    const runId = await start(w, 'o5');
    assert.equal((await post(w, `/api/runs/${runId}/cancel`, undefined)).status, 401);
    assert.equal((await post(w, `/api/runs/${runId}/cancel`, 'hook')).status, 403);
    const cancelled = await post(w, `/api/runs/${runId}/cancel`, 'alice');
    assert.equal(cancelled.status, 202);
    assert.equal(cancelled.body['status'], 'CANCELLED');
    // a second cancel: 409 while the run has not moved on yet, 404 once it has (the cancel resumes it at once)
    assert.ok(
      ['WAIT_RESOLVED', 'WAIT_NOT_FOUND'].includes(
        String((await post(w, `/api/runs/${runId}/cancel`, 'alice')).body['code']),
      ),
    );
    await w.host.host.waits.poll();
    const s = await status(w, runId);
    assert.equal(s.outcome, 'FAIL');
    assert.equal(s.error?.code, 'RUN_CANCELLED');
    assert.ok(office().released.includes('o5'));
  } finally {
    await w.gateway.close();
    await w.host.close();
  }
});

test('Prefer: wait=N holds the answer of a parked run for its end, or answers 202 after N s', async () => {
  const w = await world();
  try {
    const held = w.gateway.app.inject({
      method: 'POST',
      url: '/api/request/expenses',
      headers: { ...as('alice'), 'content-type': 'application/json', prefer: 'respond-async, wait=20' },
      payload: JSON.stringify({ order: 'o6' }),
    });
    // the run parks (its notify mail is sent once the wait is stored); then it is cancelled
    while (office().mails.find((m) => m.order === 'o6') === undefined) await new Promise((r) => setTimeout(r, 10));
    const runId = /\/api\/runs\/([^/]+)\//.exec(mailOf('o6').wait.callbacks['signal']!)![1]!;
    assert.equal((await post(w, `/api/runs/${runId}/cancel`, 'alice')).status, 202);
    const res = await held;
    assert.equal(res.headers['preference-applied'], 'wait=20');
    assert.equal(res.statusCode, 409);
    assert.equal((res.json() as { code: string }).code, 'RUN_CANCELLED');

    const began = Date.now();
    const timedOut = await w.gateway.app.inject({
      method: 'POST',
      url: '/api/request/expenses',
      headers: { ...as('alice'), 'content-type': 'application/json', prefer: 'wait=1' },
      payload: JSON.stringify({ order: 'o7' }),
    });
    assert.equal(timedOut.statusCode, 202);
    assert.equal(timedOut.headers['preference-applied'], 'wait=1');
    assert.ok(Date.now() - began >= 900, 'held about a second');
  } finally {
    await w.gateway.close();
    await w.host.close();
  }
});

test('Prefer: wait=N holds count against gateway.stream.maxPerClient: past it the 202 comes at once, unheld', async () => {
  const w = await world(1);
  try {
    const first = w.gateway.app.inject({
      method: 'POST',
      url: '/api/request/expenses',
      headers: { ...as('alice'), 'content-type': 'application/json', prefer: 'wait=20' },
      payload: JSON.stringify({ order: 'o8' }),
    });
    while (office().mails.find((m) => m.order === 'o8') === undefined) await new Promise((r) => setTimeout(r, 10));
    // alice's one slot is held by the first: her second is answered at once, without the preference
    const began = Date.now();
    const second = await w.gateway.app.inject({
      method: 'POST',
      url: '/api/request/expenses',
      headers: { ...as('alice'), 'content-type': 'application/json', prefer: 'wait=20' },
      payload: JSON.stringify({ order: 'o9' }),
    });
    assert.equal(second.statusCode, 202);
    assert.equal(second.headers['preference-applied'], undefined);
    assert.ok(Date.now() - began < 5000, 'not held');
    // another client has slots of its own
    const bobs = await w.gateway.app.inject({
      method: 'POST',
      url: '/api/request/expenses',
      headers: { ...as('bob'), 'content-type': 'application/json', prefer: 'wait=1' },
      payload: JSON.stringify({ order: 'o10' }),
    });
    assert.equal(bobs.headers['preference-applied'], 'wait=1');
    // the first ends (cancelled): its slot is given back
    const runId = /\/api\/runs\/([^/]+)\//.exec(mailOf('o8').wait.callbacks['signal']!)![1]!;
    assert.equal((await post(w, `/api/runs/${runId}/cancel`, 'alice')).status, 202);
    assert.equal((await first).headers['preference-applied'], 'wait=20');
    const third = await w.gateway.app.inject({
      method: 'POST',
      url: '/api/request/expenses',
      headers: { ...as('alice'), 'content-type': 'application/json', prefer: 'wait=1' },
      payload: JSON.stringify({ order: 'o11' }),
    });
    assert.equal(third.headers['preference-applied'], 'wait=1');
  } finally {
    await w.gateway.close();
    await w.host.close();
  }
});
