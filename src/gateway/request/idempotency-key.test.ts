import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import { MemoryKeyStore } from '../../states/request-keys/index.js';
import type { Admitted } from '../forms/admit.js';
import { parseIdempotencyKey } from './idempotency-header.js';
import { IdempotencyKeys, LOCK_GRACE_MS } from './idempotency-key.js';

test('parseIdempotencyKey: bare and quoted keys, and what is refused', () => {
  assert.equal(parseIdempotencyKey(undefined), undefined);
  assert.equal(parseIdempotencyKey('abc-123'), 'abc-123');
  assert.equal(parseIdempotencyKey('"abc-123"'), 'abc-123');
  assert.equal(parseIdempotencyKey('"a\\"b"'), 'a"b');
  assert.equal(parseIdempotencyKey('with space'), 'with space');
  for (const bad of ['', '""', 'x'.repeat(256), 'a\tb', 'ü', '"a"b"', ['a', 'b']]) {
    const parsed = parseIdempotencyKey(bad as string);
    assert.equal(typeof parsed, 'object', JSON.stringify(bad));
  }
});

test('a key whose request never ended is locked for timeout + grace, then runs again (fake clock)', async () => {
  let now = 1_000_000;
  const keys = new IdempotencyKeys(new MemoryKeyStore(), {
    ttlMs: 60_000,
    maxBody: 1024,
    maxKeysPerCaller: 1000,
    timeoutMs: 5000,
    now: () => now,
  });
  const admitted = { principal: { sub: 'alice', roles: [], claims: {}, anonymous: false } } as unknown as Admitted;
  let runs = 0;
  const app = Fastify();
  app.post('/x', { onSend: keys.onSend }, async (request, reply) => {
    if (!(await keys.begin(request, reply, admitted, 'json'))) return reply;
    runs++;
    // the first run "crashes": its gateway never answers, so nothing is stored
    if (runs === 1) return reply.hijack();
    return reply.code(201).send({ run: runs });
  });
  try {
    const send = () =>
      app.inject({ method: 'POST', url: '/x', headers: { 'idempotency-key': 'k' }, payload: { a: 1 } });
    void send().catch(() => undefined);
    while (runs === 0) await new Promise((r) => setTimeout(r, 1));
    assert.equal((await send()).statusCode, 409);
    now += 5000 + LOCK_GRACE_MS - 1;
    assert.equal((await send()).statusCode, 409, 'still locked');
    now += 1;
    const again = await send();
    assert.equal(again.statusCode, 201, 'the lock passed: the request runs again');
    assert.deepEqual(again.json(), { run: 2 });
    const replay = await send();
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    // the stored response lives ttl after the run ended, then the key is free
    now += 60_000;
    assert.deepEqual((await send()).json(), { run: 3 });
  } finally {
    await app.close();
  }
});
