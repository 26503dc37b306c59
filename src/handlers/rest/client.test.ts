import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SagawayError } from '../../core/errors.js';
import { httpSystem, startLoopback, type LoopbackServer } from '../../../test/handlers/rest-loopback.js';
import { RestClient } from './client.js';
import { buildRequest } from './request.js';

// Real calls to a real server on 127.0.0.1, through a system that allows private targets.

const never = new AbortController().signal;

async function rejection(p: Promise<unknown>): Promise<SagawayError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof SagawayError, `expected a SagawayError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected a rejection');
}

describe('RestClient against a loopback server (allowPrivate)', () => {
  let server: LoopbackServer;
  let client: RestClient;
  let system: ReturnType<typeof httpSystem>;
  const call = (parameters: Record<string, unknown>, input?: unknown, c = client, s = system) =>
    c.send(buildRequest(s, parameters, input), never);

  before(async () => {
    server = await startLoopback();
    system = httpSystem('local_api', `${server.origin}/api`, {
      allowPrivate: true,
      timeoutMs: 5_000, // generous: a loaded CI machine must not turn a success into a timeout
      maxResponseSize: 64 * 1024,
      headers: { 'X-System': 'sys', 'X-Override': 'from-system' },
    });
    client = new RestClient(system);
  });
  after(async () => {
    await client.close();
    await server.close();
  });

  test('a JSON response is parsed', async () => {
    const res = await call({ path: '/json' });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { ok: true, n: 42 });
  });

  test('a +json content type is parsed too', async () => {
    assert.deepEqual((await call({ path: '/problem-json' })).body, { a: [1, 2] });
  });

  test('a text response stays text', async () => {
    assert.equal((await call({ path: 'text' })).body, 'hello, world');
  });

  test('an empty body is null', async () => {
    const res = await call({ path: '/empty' });
    assert.equal(res.status, 204);
    assert.equal(res.body, null);
  });

  test('invalid JSON under a JSON content type fails UPSTREAM_ERROR 502', async () => {
    const err = await rejection(call({ path: '/bad-json' }));
    assert.equal(err.code, 'UPSTREAM_ERROR');
    assert.equal(err.http, 502);
  });

  test('upstream 404 fails UPSTREAM_ERROR with http 404, without the upstream body', async () => {
    const err = await rejection(call({ path: '/status/404' }));
    assert.equal(err.code, 'UPSTREAM_ERROR');
    assert.equal(err.http, 404);
    assert.equal(err.message, 'upstream answered 404');
  });

  test('upstream 500 and 503 keep their status', async () => {
    assert.equal((await rejection(call({ path: '/status/500' }))).http, 500);
    assert.equal((await rejection(call({ path: '/status/503' }))).http, 503);
    const odd = await rejection(call({ path: '/status/999' }));
    assert.equal(odd.code, 'UPSTREAM_ERROR');
    assert.equal(odd.http, 502);
  });

  test('a server that does not answer fails UPSTREAM_TIMEOUT 504 after the system timeout', async () => {
    const started = Date.now();
    const quick = { ...system, timeoutMs: 300 };
    const c = new RestClient(quick);
    const err = await rejection(c.send(buildRequest(quick, { path: '/slow' }, undefined), never));
    await c.close();
    assert.equal(err.code, 'UPSTREAM_TIMEOUT');
    assert.equal(err.http, 504);
    const took = Date.now() - started;
    assert.ok(took >= 250 && took < 4_000, `took ${took} ms`);
  });

  test('a body that stalls after the headers also ends in UPSTREAM_TIMEOUT', async () => {
    const quick = { ...system, timeoutMs: 300 };
    const c = new RestClient(quick);
    const err = await rejection(c.send(buildRequest(quick, { path: '/stall-body' }, undefined), never));
    await c.close();
    assert.equal(err.code, 'UPSTREAM_TIMEOUT');
  });

  test('an aborted caller signal ends the call with UPSTREAM_TIMEOUT before the system timeout', async () => {
    const slowSystem = { ...system, timeoutMs: 10_000 };
    const c = new RestClient(slowSystem);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    const started = Date.now();
    const err = await rejection(c.send(buildRequest(slowSystem, { path: '/slow' }, undefined), ac.signal));
    await c.close();
    assert.equal(err.code, 'UPSTREAM_TIMEOUT');
    assert.ok(Date.now() - started < 5_000);
  });

  test('a streamed body over maxResponseSize fails UPSTREAM_TOO_LARGE', async () => {
    const err = await rejection(call({ path: '/big' }));
    assert.equal(err.code, 'UPSTREAM_TOO_LARGE');
    assert.equal(err.http, 502);
  });

  test('an announced content-length over maxResponseSize fails before reading', async () => {
    const tiny = { ...system, maxResponseSize: 1000 };
    const c = new RestClient(tiny);
    const err = await rejection(c.send(buildRequest(tiny, { path: '/big-cl' }, undefined), never));
    await c.close();
    assert.equal(err.code, 'UPSTREAM_TOO_LARGE');
  });

  test('a body exactly at maxResponseSize is accepted', async () => {
    const exact = { ...system, maxResponseSize: 4096 };
    const c = new RestClient(exact);
    const res = await c.send(buildRequest(exact, { path: '/big-cl' }, undefined), never);
    await c.close();
    assert.equal((res.body as string).length, 4096);
  });

  test('method, query, merged headers and a JSON body reach the server', async () => {
    const res = await call(
      {
        method: 'post',
        path: '/echo',
        query: { q: 'a b&c', tag: ['x', 'y'], n: 3, skip: null },
        headers: { 'X-Override': 'from-step', Authorization: 'Bearer s3cret' },
      },
      { name: 'widget', qty: 2 },
    );
    const seen = res.body as { method: string; url: string; headers: Record<string, string>; body: string };
    assert.equal(seen.method, 'POST');
    assert.equal(seen.url, '/api/echo?q=a+b%26c&tag=x&tag=y&n=3');
    assert.equal(seen.headers['x-system'], 'sys');
    assert.equal(seen.headers['x-override'], 'from-step');
    assert.equal(seen.headers['authorization'], 'Bearer s3cret');
    assert.equal(seen.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(seen.body), { name: 'widget', qty: 2 });
  });

  test('parameters.body wins over the input; a string body is sent as text', async () => {
    const res = await call({ method: 'PUT', path: '/echo', body: 'plain words' }, { ignored: true });
    const seen = res.body as { method: string; headers: Record<string, string>; body: string };
    assert.equal(seen.method, 'PUT');
    assert.equal(seen.body, 'plain words');
    assert.match(seen.headers['content-type'] ?? '', /^text\/plain/);
  });

  test('a form content type url-encodes an object body', async () => {
    const res = await call({
      method: 'POST',
      path: '/echo',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: { grant_type: 'client_credentials', scope: 'a b' },
    });
    assert.equal((res.body as { body: string }).body, 'grant_type=client_credentials&scope=a+b');
  });

  test('GET sends no body even when there is an input', async () => {
    const res = await call({ path: '/echo' }, { some: 'input' });
    const seen = res.body as { method: string; body: string; headers: Record<string, string> };
    assert.equal(seen.method, 'GET');
    assert.equal(seen.body, '');
    assert.equal(seen.headers['content-type'], undefined);
  });

  test('a redirect is not followed by default: UPSTREAM_ERROR 502, and the target is never requested', async () => {
    const before = server.requests.length;
    const err = await rejection(call({ path: '/redirect', query: { to: '/api/json' } }));
    assert.equal(err.code, 'UPSTREAM_ERROR');
    assert.equal(err.http, 502);
    assert.match(err.message, /not followed/);
    assert.deepEqual(
      server.requests.slice(before).map((r) => r.url),
      ['/api/redirect?to=%2Fapi%2Fjson'],
    );
  });

  test('with followRedirects a redirect is followed (303 turns POST into GET without a body)', async () => {
    const follow = { ...system, followRedirects: true };
    const c = new RestClient(follow);
    const res = await c.send(
      buildRequest(follow, { method: 'POST', path: '/redirect', query: { to: '/api/echo', status: 303 } }, { x: 1 }),
      never,
    );
    await c.close();
    const seen = res.body as { method: string; url: string; body: string };
    assert.equal(seen.method, 'GET');
    assert.equal(seen.url, '/api/echo');
    assert.equal(seen.body, '');
  });

  test('307 keeps the method and the body', async () => {
    const follow = { ...system, followRedirects: true };
    const c = new RestClient(follow);
    const res = await c.send(
      buildRequest(follow, { method: 'POST', path: '/redirect', query: { to: '/api/echo', status: 307 } }, { x: 1 }),
      never,
    );
    await c.close();
    const seen = res.body as { method: string; body: string };
    assert.equal(seen.method, 'POST');
    assert.deepEqual(JSON.parse(seen.body), { x: 1 });
  });

  test('a redirect loop stops after 5 hops with UPSTREAM_ERROR', async () => {
    const follow = { ...system, followRedirects: true };
    const c = new RestClient(follow);
    const before = server.requests.length;
    const err = await rejection(c.send(buildRequest(follow, { path: '/loop' }, undefined), never));
    await c.close();
    assert.equal(err.code, 'UPSTREAM_ERROR');
    assert.match(err.message, /more than 5/);
    assert.equal(server.requests.length - before, 6); // the first request and 5 followed hops
  });

  test('a refused connection fails UPSTREAM_ERROR 502 without naming the host', async () => {
    const gone = await startLoopback();
    const origin = gone.origin;
    await gone.close();
    const s = httpSystem('gone', origin, { allowPrivate: true });
    const c = new RestClient(s);
    const err = await rejection(c.send(buildRequest(s, {}, undefined), never));
    await c.close();
    assert.equal(err.code, 'UPSTREAM_ERROR');
    assert.equal(err.http, 502);
    assert.doesNotMatch(err.message, /127\.0\.0\.1|ECONNREFUSED/);
  });
});
