import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request as httpRequest } from 'node:http';
import { test } from 'node:test';
import type { Settings } from '../../src/config/settings.js';
import { silentLogger } from '../../src/core/logger.js';
import type { SagaResult } from '../../src/core/types.js';
import { createGateway, type Gateway } from '../../src/gateway/server.js';
import { ok, ScriptedService } from './harness.js';
import { KEY_A, KEY_B, orders, post, settings } from './idempotency-harness.js';

/** Gateway tests of Idempotency-Key requests (issue 12 part 4, docs/gateway.md). */

async function withGateway(
  service: ScriptedService,
  fn: (gw: Gateway) => Promise<void>,
  s: Settings = settings(),
): Promise<void> {
  const gw = await createGateway({ settings: s, service, log: silentLogger() });
  try {
    await fn(gw);
  } finally {
    await gw.close();
  }
}

test('the same key and body again: the stored response, replayed, without a second run', () =>
  withGateway(orders(), async (gw) => {
    const first = await post(gw, 'k-1', { sku: 'A', qty: 2 });
    assert.equal(first.statusCode, 201);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    const again = await post(gw, 'k-1', { sku: 'A', qty: 2 });
    assert.equal(again.statusCode, 201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.headers['content-type'], first.headers['content-type']);
    assert.equal(again.body, first.body);
    assert.equal(JSON.parse(again.body).order, 'o1');
    // the replay has its own request id
    assert.notEqual(again.headers['x-request-id'], first.headers['x-request-id']);
    // the quoted (structured field) form of the same key is the same key
    const quoted = await post(gw, '"k-1"', { sku: 'A', qty: 2 });
    assert.equal(quoted.headers['idempotent-replayed'], 'true');
    // without a key, or with another one, the request runs
    assert.equal(JSON.parse((await post(gw, undefined, { sku: 'A', qty: 2 })).body).order, 'o2');
    assert.equal(JSON.parse((await post(gw, 'k-2', { sku: 'A', qty: 2 })).body).order, 'o3');
  }));

test('the same key with another body, path or method: 422 IDEMPOTENCY_KEY_MISMATCH', async () => {
  const service = orders();
  await withGateway(service, async (gw) => {
    assert.equal((await post(gw, 'k', { sku: 'A' })).statusCode, 201);
    const other = await post(gw, 'k', { sku: 'B' });
    assert.equal(other.statusCode, 422);
    assert.match(String(other.headers['content-type']), /^application\/problem\+json/);
    assert.equal(JSON.parse(other.body).code, 'IDEMPOTENCY_KEY_MISMATCH');
    assert.equal((await post(gw, 'k', { sku: 'A' }, KEY_A, '/api/request/orders/7')).statusCode, 422);
    const put = await gw.app.inject({
      method: 'PUT',
      url: '/api/request/orders',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY_A, 'idempotency-key': 'k' },
      payload: JSON.stringify({ sku: 'A' }),
    });
    assert.equal(put.statusCode, 422);
    assert.equal(service.calls.length, 1);
  });
});

test('while the first request runs: 409 IDEMPOTENCY_KEY_IN_USE with Retry-After, then the replay', async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const service = new ScriptedService(async (_req, _r, n) => {
    await gate;
    return ok({ order: `o${n}` }, 201);
  });
  await withGateway(service, async (gw) => {
    const first = post(gw, 'slow', { sku: 'A' });
    while (service.calls.length === 0) await new Promise((r) => setTimeout(r, 5));
    const busy = await post(gw, 'slow', { sku: 'A' });
    assert.equal(busy.statusCode, 409);
    assert.equal(busy.headers['retry-after'], '1');
    assert.equal(JSON.parse(busy.body).code, 'IDEMPOTENCY_KEY_IN_USE');
    // another body while it runs is still a mismatch, not "in use"
    assert.equal((await post(gw, 'slow', { sku: 'B' })).statusCode, 422);
    release();
    assert.equal((await first).statusCode, 201);
    const replay = await post(gw, 'slow', { sku: 'A' });
    assert.equal(replay.statusCode, 201);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(service.calls.length, 1);
  });
});

test('two principals with one key: each has its own, neither sees the other', async () => {
  const service = orders();
  await withGateway(service, async (gw) => {
    const alice = await post(gw, 'shared', { sku: 'A' }, KEY_A);
    assert.equal(JSON.parse(alice.body).order, 'o1');
    // bob's request with the same key and another body is not a mismatch: it runs
    const bob = await post(gw, 'shared', { sku: 'B' }, KEY_B);
    assert.equal(bob.statusCode, 201);
    assert.equal(bob.headers['idempotent-replayed'], undefined);
    assert.equal(JSON.parse(bob.body).order, 'o2');
    // bob with alice's very body does not get alice's response: his own key holds another body
    assert.equal((await post(gw, 'shared', { sku: 'A' }, KEY_B)).statusCode, 422);
    // each replays their own
    assert.equal(JSON.parse((await post(gw, 'shared', { sku: 'A' }, KEY_A)).body).order, 'o1');
    assert.equal(JSON.parse((await post(gw, 'shared', { sku: 'B' }, KEY_B)).body).order, 'o2');
    assert.equal(service.calls.length, 2);
  });
});

test('anonymous callers share one scope per public API, whatever their address', async () => {
  const service = orders();
  await withGateway(service, async (gw) => {
    const send = (url: string, ip: string) =>
      gw.app.inject({
        method: 'POST',
        url,
        remoteAddress: ip,
        headers: { 'content-type': 'application/json', 'idempotency-key': 'anon-k' },
        payload: '{"a":1}',
      });
    assert.equal((await send('/api/request/open', '10.0.0.1')).statusCode, 201);
    const moved = await send('/api/request/open', '10.0.0.2');
    assert.equal(moved.headers['idempotent-replayed'], 'true');
    // another API prefix is another scope
    const other = await send('/api/request/other', '10.0.0.1');
    assert.equal(other.headers['idempotent-replayed'], undefined);
    assert.equal(service.calls.length, 2);
  });
});

test("one caller's flood of new keys is 429 IDEMPOTENCY_KEYS_EXHAUSTED; its old keys and other callers' still work", async () => {
  const service = orders();
  await withGateway(
    service,
    async (gw) => {
      for (let i = 0; i < 3; i++) assert.equal((await post(gw, `flood-${i}`, { i })).statusCode, 201);
      for (let i = 3; i < 6; i++) {
        const refused = await post(gw, `flood-${i}`, { i });
        assert.equal(refused.statusCode, 429);
        assert.equal(refused.json().code, 'IDEMPOTENCY_KEYS_EXHAUSTED');
        assert.equal(refused.headers['retry-after'], '60');
      }
      assert.equal(service.calls.length, 3, 'the refused requests did not run');
      // the caller's own keys are still replayed, and a request without a key still runs
      assert.equal((await post(gw, 'flood-0', { i: 0 })).headers['idempotent-replayed'], 'true');
      assert.equal((await post(gw, undefined, { i: 9 })).statusCode, 201);
      // another caller's keys work, the same key name included
      assert.equal((await post(gw, 'flood-5', { i: 5 }, KEY_B)).statusCode, 201);
      assert.equal((await post(gw, 'bob-1', { b: 1 }, KEY_B)).statusCode, 201);
      // anonymous callers count per source address, though they share the rows' scope
      const anon = (key: string, ip: string) =>
        gw.app.inject({
          method: 'POST',
          url: '/api/request/open',
          remoteAddress: ip,
          headers: { 'content-type': 'application/json', 'idempotency-key': key },
          payload: '{"a":1}',
        });
      for (let i = 0; i < 3; i++) assert.equal((await anon(`a-${i}`, '10.0.0.1')).statusCode, 201);
      assert.equal((await anon('a-3', '10.0.0.1')).statusCode, 429);
      assert.equal((await anon('a-3', '10.0.0.2')).statusCode, 201);
    },
    settings({ maxKeysPerCaller: 3 }),
  );
});

test('a malformed key is 400 IDEMPOTENCY_KEY_INVALID and nothing runs; 255 characters are fine', async () => {
  const service = orders();
  await withGateway(service, async (gw) => {
    for (const bad of ['', '""', 'x'.repeat(256), 'tab\there', 'é-key', '"a"b"']) {
      const res = await post(gw, bad, { sku: 'A' });
      assert.equal(res.statusCode, 400, JSON.stringify(bad));
      assert.equal(JSON.parse(res.body).code, 'IDEMPOTENCY_KEY_INVALID');
    }
    assert.equal(service.calls.length, 0);
    assert.equal((await post(gw, 'x'.repeat(255), { sku: 'A' })).statusCode, 201);
  });
});

test('the header twice (Node joins the copies into "a, b") is 400 IDEMPOTENCY_KEY_INVALID and nothing runs', async () => {
  const service = orders();
  await withGateway(service, async (gw) => {
    const { port } = await gw.listen(0, '127.0.0.1');
    const body = JSON.stringify({ sku: 'A' });
    // Node's client sends an array value as two header lines, as a client repeating the header would.
    const send = (key: string | string[]) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest(
          {
            port,
            host: '127.0.0.1',
            method: 'POST',
            path: '/api/request/orders',
            headers: { 'content-type': 'application/json', 'x-api-key': KEY_A, 'idempotency-key': key },
          },
          (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (c: string) => (text += c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    const twice = await send(['key-one', 'key-two']);
    assert.equal(twice.status, 400);
    assert.equal(JSON.parse(twice.body).code, 'IDEMPOTENCY_KEY_INVALID');
    assert.match(JSON.parse(twice.body).detail, /more than one Idempotency-Key/);
    assert.equal(service.calls.length, 0, 'nothing ran');
    assert.equal((await send('key-one, key-two')).status, 201, 'one header holding a comma is one key');
  });
});

test('GET ignores the key; failures are stored, a run where nothing ran is not (the retry runs)', async () => {
  const results: SagaResult[] = [
    { outcome: 'FAIL', http: 409, error: { code: 'OUT_OF_STOCK', message: 'none left', http: 409 } },
    { outcome: 'FAIL', http: 503, error: { code: 'RUNNER_UNAVAILABLE', message: 'no runner' }, ran: 'none' },
    ok({ fine: true }),
    { outcome: 'FAIL', http: 503, error: { code: 'RUNNER_UNAVAILABLE', message: 'no consumer', step: 'charge' } },
    ok({ n: 1 }),
    ok({ n: 2 }),
  ];
  const service = new ScriptedService(() => results.shift()!);
  await withGateway(service, async (gw) => {
    const failed = await post(gw, 'f', { sku: 'A' });
    assert.equal(failed.statusCode, 409);
    const again = await post(gw, 'f', { sku: 'A' });
    assert.equal(again.statusCode, 409);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.match(String(again.headers['content-type']), /^application\/problem\+json/);
    assert.equal(JSON.parse(again.body).code, 'OUT_OF_STOCK');
    assert.equal((await post(gw, 'u', { sku: 'A' })).statusCode, 503);
    const retried = await post(gw, 'u', { sku: 'A' });
    assert.equal(retried.statusCode, 200);
    assert.equal(retried.headers['idempotent-replayed'], undefined);
    // the same code where something may have run is stored: earlier steps may have had effects
    assert.equal((await post(gw, 's', { sku: 'A' })).statusCode, 503);
    const stepFailed = await post(gw, 's', { sku: 'A' });
    assert.equal(stepFailed.statusCode, 503);
    assert.equal(stepFailed.headers['idempotent-replayed'], 'true');
    const get = () =>
      gw.app.inject({
        method: 'GET',
        url: '/api/request/orders',
        headers: { 'x-api-key': KEY_A, 'idempotency-key': 'g' },
      });
    assert.deepEqual(JSON.parse((await get()).body), { n: 1 });
    assert.deepEqual(JSON.parse((await get()).body), { n: 2 });
  });
});

test('a body over maxBody is replayed as its status alone, marked Idempotent-Body-Omitted', async () => {
  const service = new ScriptedService(() => ok({ big: 'x'.repeat(2000) }, 201));
  await withGateway(
    service,
    async (gw) => {
      assert.equal((await post(gw, 'big', {})).body.length > 2000, true);
      const replay = await post(gw, 'big', {});
      assert.equal(replay.statusCode, 201);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.headers['idempotent-body-omitted'], 'true');
      assert.equal(replay.body, '');
      assert.equal(service.calls.length, 1);
    },
    settings({ maxBody: 1024 }),
  );
});

test('a keyed run outlives its client: the outcome is stored and the retry gets it', async () => {
  let finished!: () => void;
  const done = new Promise<void>((r) => (finished = r));
  const service = new ScriptedService(async (_req, _r, n) => {
    await new Promise((r) => setTimeout(r, 150));
    finished();
    return ok({ order: `o${n}` }, 201);
  });
  const gw = await createGateway({ settings: settings(), service, log: silentLogger() });
  try {
    const { port } = await gw.listen(0, '127.0.0.1');
    const body = '{"sku":"A"}';
    const req = httpRequest({
      port,
      host: '127.0.0.1',
      method: 'POST',
      path: '/api/request/orders',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY_A, 'idempotency-key': 'gone' },
    });
    req.on('error', () => undefined);
    req.end(body);
    while (service.calls.length === 0) await new Promise((r) => setTimeout(r, 5));
    req.destroy();
    await done;
    assert.equal(service.aborted, 0, 'the run was not stopped');
    // the client retries (409 while the outcome is being stored) until it gets the stored one
    let retry = await post(gw, 'gone', { sku: 'A' });
    for (let i = 0; i < 1000 && retry.statusCode === 409; i++) {
      await new Promise((r) => setTimeout(r, 5));
      retry = await post(gw, 'gone', { sku: 'A' });
    }
    assert.equal(retry.statusCode, 201);
    assert.equal(retry.headers['idempotent-replayed'], 'true');
    assert.equal(JSON.parse(retry.body).order, 'o1');
    assert.equal(service.calls.length, 1);
  } finally {
    await gw.close();
  }
});

test('a sqlite state keeps the keys across a gateway restart', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sagaway-idem-'));
  const s = settings(
    { state: 'keys' },
    {
      keys: { type: 'sqlite', alias: 'keys', file: join(dir, 'keys.db'), table: 'keys', queries: {} },
    },
  );
  const service = orders();
  try {
    await withGateway(
      service,
      async (gw) => assert.equal((await post(gw, 'durable', { sku: 'A' })).statusCode, 201),
      s,
    );
    await withGateway(
      service,
      async (gw) => {
        const replay = await post(gw, 'durable', { sku: 'A' });
        assert.equal(replay.headers['idempotent-replayed'], 'true');
        assert.equal(JSON.parse(replay.body).order, 'o1');
      },
      s,
    );
    assert.equal(service.calls.length, 1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
