import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import type { SystemSettings } from '../../config/settings.js';
import { SagawayError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { silentLogger } from '../../core/logger.js';
import { ack, type ActionContext, type HandlerEnv } from '../api.js';
import { httpSystem, startLoopback, type LoopbackServer } from '../../../test/handlers/rest-loopback.js';
import { runnerSettingsFor, settingsFor } from '../../testing/settings.js';
import { createRestHandler, restHandler } from './index.js';

/** A HandlerEnv with only what the rest handler reads: the systems of the settings. */
function fakeEnv(systems: Record<string, SystemSettings>): HandlerEnv {
  const unused = (): never => {
    throw new Error('not used by the rest handler');
  };
  return {
    settings: settingsFor({}, { systems }),
    runner: runnerSettingsFor({ handlers: ['rest'] }, {}, 'r'),
    log: silentLogger(),
    state: unused,
    runEvent: unused,
    runSaga: unused,
  };
}

function fakeCtx(
  domain: string | undefined,
  parameters: Record<string, unknown>,
  log: Logger = silentLogger(),
): ActionContext {
  return {
    parameters,
    domain,
    request: { request: { method: 'GET', path: '/t', id: 'req-1', query: {} }, user: null },
    user: null,
    idempotencyKey: 'run:step',
    signal: new AbortController().signal,
    log,
    state: () => {
      throw new Error('no states');
    },
    ack,
    fail: (code, message, http) => {
      throw new SagawayError(code, message, http === undefined ? {} : { http });
    },
  };
}

/** A debug-level logger whose lines are collected as text. */
function capturingLogger(): { log: Logger; text: () => string } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return { log: pino({ level: 'debug' }, sink), text: () => lines.join('') };
}

async function failure(p: unknown): Promise<SagawayError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof SagawayError);
    return err;
  }
  assert.fail('expected a failure');
}

describe('rest handler', () => {
  let server: LoopbackServer;
  let systems: Record<string, SystemSettings>;
  before(async () => {
    server = await startLoopback();
    systems = {
      ...settingsFor({ systems: { bus: { type: 'nats', servers: ['nats://127.0.0.1:4222'] } } }).systems,
      inside: httpSystem('inside', `${server.origin}/api`, { allowPrivate: true, headers: { 'X-Tenant': 't1' } }),
      guarded: httpSystem('guarded', `${server.origin}/api`),
    };
  });
  after(async () => server.close());

  test('is named rest and implements CallRest version 0 only', () => {
    const handler = restHandler(fakeEnv(systems));
    assert.equal(handler.name, 'rest');
    assert.deepEqual(Object.keys(handler.actions), ['CallRest']);
    assert.deepEqual(Object.keys(handler.actions['CallRest'] ?? {}), ['0']);
  });

  test('CallRest returns the parsed upstream body as the output', async () => {
    const call = restHandler(fakeEnv(systems)).actions['CallRest']![0]!;
    const out = await call({ name: 'n' }, fakeCtx('inside', { method: 'POST', path: '/echo', query: { a: 1 } }));
    const seen = out as { method: string; url: string; headers: Record<string, string>; body: string };
    assert.equal(seen.method, 'POST');
    assert.equal(seen.url, '/api/echo?a=1');
    assert.equal(seen.headers['x-tenant'], 't1');
    assert.deepEqual(JSON.parse(seen.body), { name: 'n' });
  });

  test("a call that changes something carries the step's idempotency key; a safe one, or a key the step sets, does not get it", async () => {
    const call = restHandler(fakeEnv(systems)).actions['CallRest']![0]!;
    const seen = async (parameters: Record<string, unknown>) =>
      ((await call({}, fakeCtx('inside', { path: '/echo', ...parameters }))) as { headers: Record<string, string> })
        .headers;
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      assert.equal((await seen({ method }))['idempotency-key'], 'run:step', method);
    }
    assert.equal((await seen({ method: 'GET' }))['idempotency-key'], undefined);
    const own = await seen({ method: 'POST', headers: { 'Idempotency-Key': 'mine' } });
    assert.equal(own['idempotency-key'], 'mine');
  });

  test('an unknown, missing or non-http domain fails DOMAIN_NOT_FOUND', async () => {
    const call = restHandler(fakeEnv(systems)).actions['CallRest']![0]!;
    for (const domain of ['nope', undefined, 'bus', 'local', '__proto__', 'constructor']) {
      const err = await failure(call(undefined, fakeCtx(domain, {})));
      assert.equal(err.code, 'DOMAIN_NOT_FOUND', String(domain));
    }
  });

  test('a system without allowPrivate refuses its loopback base URL: SSRF_BLOCKED 403, no connection', async () => {
    const before = server.connections;
    const call = restHandler(fakeEnv(systems)).actions['CallRest']![0]!;
    const err = await failure(call(undefined, fakeCtx('guarded', { path: '/json' })));
    assert.equal(err.code, 'SSRF_BLOCKED');
    assert.equal(err.http, 403);
    assert.equal(server.connections, before);
  });

  test('upstream errors keep their status through the handler', async () => {
    const call = restHandler(fakeEnv(systems)).actions['CallRest']![0]!;
    const err = await failure(call(undefined, fakeCtx('inside', { path: '/status/404' })));
    assert.equal(err.code, 'UPSTREAM_ERROR');
    assert.equal(err.http, 404);
  });

  test('header values (injected secrets) never reach the logs, on success or failure', async () => {
    const call = restHandler(fakeEnv(systems)).actions['CallRest']![0]!;
    const { log, text } = capturingLogger();
    const headers = { Authorization: 'Bearer sk_live_TOPSECRET', 'X-Api-Key': 'APIKEY_TOPSECRET' };
    await call(undefined, fakeCtx('inside', { path: '/json', headers }, log));
    await failure(call(undefined, fakeCtx('inside', { path: '/status/500', headers }, log)));
    await failure(call(undefined, fakeCtx('guarded', { path: '/json', headers }, log)));
    const logged = text();
    assert.match(logged, /rest call/);
    assert.match(logged, /SSRF policy/);
    assert.doesNotMatch(logged, /TOPSECRET/);
  });

  test('createRestHandler passes the injected lookup and connect steps to the client', async () => {
    const seen: string[] = [];
    const factory = createRestHandler({
      lookup: async (name) => (name === 'svc.example.test' ? [{ address: '10.1.2.3', family: 4 }] : []),
      connect: async (target) => {
        seen.push(`${target.address}:${target.port}`);
        throw Object.assign(new Error('refused by test'), { code: 'ECONNREFUSED' });
      },
    });
    const env = fakeEnv({
      open: httpSystem('open', 'http://svc.example.test:8080', { allowPrivate: true }),
      shut: httpSystem('shut', 'http://svc.example.test:8080'),
    });
    const call = factory(env).actions['CallRest']![0]!;
    assert.equal((await failure(call(undefined, fakeCtx('shut', {})))).code, 'SSRF_BLOCKED');
    assert.deepEqual(seen, []);
    assert.equal((await failure(call(undefined, fakeCtx('open', {})))).code, 'UPSTREAM_ERROR');
    assert.deepEqual(seen, ['10.1.2.3:8080']);
  });
});
