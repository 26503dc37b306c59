import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import Fastify, { type FastifyReply } from 'fastify';
import { MemoryKeyStore, type RequestKeyStore } from '../../states/request-keys/index.js';
import type { Admitted } from '../forms/admit.js';
import { MAX_KEY_LENGTH, parseIdempotencyKey } from './idempotency-header.js';
import { IdempotencyKeys } from './idempotency-key.js';

/**
 * The rules of Idempotency-Key requests that the gateway tests over HTTP let through (mutation
 * testing, TESTING.md): each refusal says why, a lone quote is a key, which methods take a key,
 * which headers a replay repeats, the stored body's bound to the byte, a stream answer, and a store
 * that fails. In process (Fastify's inject, the memory store): a few milliseconds each.
 */

const alice = { principal: { sub: 'alice', roles: [], claims: {}, anonymous: false } } as unknown as Admitted;

test('parseIdempotencyKey: each refusal says why; quoted keys unescape \\" and \\\\', () => {
  const reason = (header: string) => {
    const parsed = parseIdempotencyKey(header);
    return typeof parsed === 'object' ? parsed.invalid : parsed;
  };
  assert.equal(reason(''), 'the Idempotency-Key is empty');
  assert.equal(reason('""'), 'the Idempotency-Key is empty');
  assert.equal(
    reason('x'.repeat(MAX_KEY_LENGTH + 1)),
    `the Idempotency-Key is longer than ${MAX_KEY_LENGTH} characters`,
  );
  assert.equal(reason('a\tb'), 'the Idempotency-Key holds characters other than visible ASCII');
  // an unescaped quote inside the quotes, in the middle or first
  assert.equal(reason('"a"b"'), 'the Idempotency-Key is not a valid string');
  assert.equal(reason('""x"'), 'the Idempotency-Key is not a valid string');
  // a lone quote is a one-character bare key, not an empty quoted string
  assert.equal(reason('"'), '"');
  assert.equal(reason('"abc'), '"abc', 'a quote at one end only is part of a bare key');
  assert.equal(reason('abc"'), 'abc"');
  assert.equal(reason('"\\""'), '"');
  assert.equal(reason('"a\\\\b"'), 'a\\b');
  assert.equal(reason(`"${'x'.repeat(MAX_KEY_LENGTH)}"`), 'x'.repeat(MAX_KEY_LENGTH), 'the quotes do not count');
  // rawHeaders tell a repeated header, whatever its case, from a value that names it
  const twice = parseIdempotencyKey('a, b', ['Idempotency-Key', 'a', 'idempotency-key', 'b']);
  assert.match(typeof twice === 'object' ? twice.invalid : '', /more than one Idempotency-Key/);
  assert.equal(parseIdempotencyKey('k', ['Idempotency-Key', 'k', 'x-note', 'idempotency-key']), 'k');
  assert.equal(parseIdempotencyKey('k', ['x-note', 'idempotency-key', 'Idempotency-Key', 'k']), 'k');
});

/** A Fastify app whose route runs through `keys`; `answer` decides each run's reply. */
function app(keys: IdempotencyKeys, answer: (reply: FastifyReply, run: number) => unknown) {
  let runs = 0;
  const fastify = Fastify();
  fastify.route({
    method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
    url: '/x',
    onSend: keys.onSend,
    handler: async (request, reply) => {
      if (!(await keys.begin(request, reply, alice, 'json'))) return reply;
      return answer(reply, ++runs);
    },
  });
  return { fastify, runs: () => runs };
}

const options = { ttlMs: 60_000, maxBody: 8, maxKeysPerCaller: 2, timeoutMs: 5000 };

test('PUT, PATCH and DELETE take a key as POST does; GET does not', async () => {
  const keys = new IdempotencyKeys(new MemoryKeyStore(), { ...options, maxKeysPerCaller: 10 });
  const { fastify, runs } = app(keys, (reply, n) => reply.send({ n }));
  try {
    for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
      const send = () => fastify.inject({ method, url: '/x', headers: { 'idempotency-key': `k-${method}` } });
      const first = await send();
      const again = await send();
      assert.equal(again.headers['idempotent-replayed'], 'true', method);
      assert.deepEqual(again.json(), first.json(), method);
    }
    assert.equal(runs(), 3);
    // a request without the header runs (the route only asks when there is one)
    assert.deepEqual((await fastify.inject({ method: 'POST', url: '/x' })).json(), { n: 4 });
    const get = () => fastify.inject({ method: 'GET', url: '/x', headers: { 'idempotency-key': 'g' } });
    assert.notDeepEqual((await get()).json(), (await get()).json());
  } finally {
    await fastify.close();
  }
});

test('a replay repeats the stored Content-Type and Content-Security-Policy, not other headers', async () => {
  const { fastify } = app(new IdempotencyKeys(new MemoryKeyStore(), options), (reply) =>
    reply
      .code(201)
      .header('content-type', 'text/plain')
      .header('content-security-policy', "default-src 'none'")
      .header('x-other', 'no')
      .send('ok'),
  );
  try {
    const send = () => fastify.inject({ method: 'POST', url: '/x', headers: { 'idempotency-key': 'h' } });
    await send();
    const replay = await send();
    assert.equal(replay.statusCode, 201);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.headers['content-type'], 'text/plain');
    assert.equal(replay.headers['content-security-policy'], "default-src 'none'");
    assert.equal(replay.headers['x-other'], undefined);
    assert.equal(replay.body, 'ok');
  } finally {
    await fastify.close();
  }
});

test('a body of exactly maxBody bytes is stored; one byte more, or a stream, is replayed without it', async () => {
  const bodies: Record<string, () => unknown> = {
    fits: () => 'x'.repeat(options.maxBody),
    over: () => 'x'.repeat(options.maxBody + 1),
    bytes: () => Buffer.from('bytes'),
    stream: () => Readable.from(['str', 'eam']),
    empty: () => undefined,
  };
  const { fastify } = app(new IdempotencyKeys(new MemoryKeyStore(), { ...options, maxKeysPerCaller: 10 }), (reply) =>
    reply
      .code(202)
      .header('content-type', 'text/plain')
      .send(bodies[String(reply.request.headers['idempotency-key'])]!()),
  );
  try {
    const send = (key: string) => fastify.inject({ method: 'POST', url: '/x', headers: { 'idempotency-key': key } });
    for (const [key, kept] of [
      ['fits', 'x'.repeat(options.maxBody)],
      ['bytes', 'bytes'],
      ['empty', ''],
    ] as const) {
      await send(key);
      const replay = await send(key);
      assert.equal(replay.headers['idempotent-replayed'], 'true', key);
      assert.equal(replay.statusCode, 202, key);
      assert.equal(replay.headers['idempotent-body-omitted'], undefined, key);
      assert.equal(replay.body, kept, key);
    }
    for (const key of ['over', 'stream']) {
      assert.notEqual((await send(key)).body, '', key);
      const replay = await send(key);
      assert.equal(replay.headers['idempotent-body-omitted'], 'true', key);
      assert.equal(replay.body, '', key);
    }
  } finally {
    await fastify.close();
  }
});

test('the client is told why: mismatch and quota details; a store that fails is 503 and nothing runs', async () => {
  const { fastify, runs } = app(new IdempotencyKeys(new MemoryKeyStore(), options), (reply, n) => reply.send({ n }));
  try {
    const send = (key: string, payload: unknown) =>
      fastify.inject({ method: 'POST', url: '/x', headers: { 'idempotency-key': key }, payload: payload as object });
    await send('a', { v: 1 });
    const mismatch = await send('a', { v: 2 });
    assert.equal(mismatch.statusCode, 422);
    assert.equal(mismatch.json().detail, 'this Idempotency-Key was used for a different request');
    await send('b', { v: 1 });
    const exhausted = await send('c', { v: 1 });
    assert.equal(exhausted.statusCode, 429);
    assert.equal(
      exhausted.json().detail,
      'this caller holds 2 Idempotency-Keys already; a new one is taken when one expires',
    );
  } finally {
    await fastify.close();
  }
  assert.equal(runs(), 2);

  const down = new MemoryKeyStore() as RequestKeyStore;
  down.claim = () => Promise.reject(new Error('connection refused'));
  const broken = app(new IdempotencyKeys(down, options), (reply, n) => reply.send({ n }));
  try {
    const res = await broken.fastify.inject({ method: 'POST', url: '/x', headers: { 'idempotency-key': 'k' } });
    assert.equal(res.statusCode, 503);
    assert.equal(res.json().code, 'STATE_UNAVAILABLE');
    assert.equal(res.json().detail, 'the idempotency key store is not available');
    assert.equal(broken.runs(), 0);
  } finally {
    await broken.fastify.close();
  }
});

/** Sends POST /x with key `k` to `fastify`; resolves when `runs()` has counted the first run. */
async function firstRunHangs(fastify: ReturnType<typeof Fastify>, runs: () => number): Promise<void> {
  void fastify.inject({ method: 'POST', url: '/x', headers: { 'idempotency-key': 'k' } }).catch(() => undefined);
  const limit = Date.now() + 5000;
  while (runs() === 0) {
    assert.ok(Date.now() < limit, 'the first request ran');
    await new Promise((r) => setTimeout(r, 1));
  }
}

test('a key bound to its run, read by a gateway without a status source: the lock alone decides (409)', async () => {
  const store = new MemoryKeyStore();
  const status = { lookup: async () => undefined };
  // the first gateway reads run statuses: its claim binds the key to its run, which never answers
  const first = app(new IdempotencyKeys(store, { ...options, status }), (reply) => reply.hijack());
  // the second shares the store but has no status source (no journal, no broker)
  const second = app(new IdempotencyKeys(store, options), (reply, n) => reply.send({ n }));
  try {
    await firstRunHangs(first.fastify, first.runs);
    const res = await second.fastify.inject({ method: 'POST', url: '/x', headers: { 'idempotency-key': 'k' } });
    assert.equal(res.statusCode, 409);
    assert.equal(res.json().code, 'IDEMPOTENCY_KEY_IN_USE');
    assert.equal(second.runs(), 0);
  } finally {
    await first.fastify.close();
    await second.fastify.close();
  }
});

test('a run nobody recorded is not taken over while its lock holds: the retry waits, then 409', async () => {
  let now = 1_000_000;
  // every status read finds no run and moves the clock 2 s on: the retry gives up after its timeout (5 s)
  const status = {
    lookup: async () => {
      now += 2000;
      return undefined;
    },
  };
  const { fastify, runs } = app(
    new IdempotencyKeys(new MemoryKeyStore(), { ...options, status, now: () => now }),
    (reply) => reply.hijack(),
  );
  try {
    await firstRunHangs(fastify, runs);
    const retry = await fastify.inject({ method: 'POST', url: '/x', headers: { 'idempotency-key': 'k' } });
    assert.equal(retry.statusCode, 409, 'the lock (timeout + grace) has not passed');
    assert.equal(runs(), 1, 'not run again');
  } finally {
    await fastify.close();
  }
});
