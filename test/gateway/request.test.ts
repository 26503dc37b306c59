import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { createGateway } from '../../src/gateway/server.js';
import { silentLogger } from '../../src/core/logger.js';
import type { SagaRequest, SagaResult } from '../../src/core/types.js';
import { delay, ok, rawHttp, ScriptedService, settingsWith, startGateway } from './harness.js';

const apis = [
  { path: '/todos', runner: 'todo', methods: ['GET', 'POST', 'PATCH', 'DELETE'], roles: [], public: true },
  { path: '/todos/archive', runner: 'archive', roles: [], public: true },
  { path: '/feed', runner: 'feed', public: true, roles: [] },
];

async function gateway(fn: (req: SagaRequest, runner: string) => SagaResult | Promise<SagaResult>, bodyLimit = 1024) {
  const svc = new ScriptedService(fn);
  const gw = await createGateway({
    settings: settingsWith({ apis, limits: { bodyLimit } }),
    service: svc,
    log: silentLogger(),
  });
  return { gw, svc };
}

const echo = (req: SagaRequest, runner: string) =>
  ok({ runner, method: req.method, path: req.path, input: req.input, user: req.user?.sub });

function problem(
  r: { statusCode: number; headers: Record<string, unknown>; body: string },
  status: number,
  code: string,
): Record<string, unknown> {
  assert.equal(r.statusCode, status, r.body);
  assert.match(String(r.headers['content-type']), /^application\/problem\+json/);
  const body = JSON.parse(r.body) as Record<string, unknown>;
  assert.equal(body['code'], code);
  assert.equal(body['status'], status);
  assert.equal(body['type'], `https://sagaway.dev/errors/${code}`);
  assert.equal(typeof body['title'], 'string');
  assert.equal(typeof body['detail'], 'string');
  assert.equal(body['requestId'], r.headers['x-request-id']);
  return body;
}

test('routing: longest API prefix selects the runner; the saga path keeps the API prefix and loses the extension', async () => {
  const { gw, svc } = await gateway(echo);
  let r = await gw.app.inject({ url: '/api/request/todos/42' });
  assert.deepEqual(r.json(), { runner: 'todo', method: 'GET', path: '/todos/42', input: {}, user: 'anonymous' });
  r = await gw.app.inject({ url: '/api/request/todos/archive/2024.json' });
  assert.equal(r.json().runner, 'archive');
  assert.equal(r.json().path, '/todos/archive/2024');
  r = await gw.app.inject({ method: 'POST', url: '/api/request/todos?x=1', payload: { title: 'a' } });
  assert.deepEqual(r.json().input, { title: 'a' });
  assert.deepEqual(svc.calls.at(-1)!.req.query, { x: '1' });
  r = await gw.app.inject({ method: 'DELETE', url: '/api/request/todos/1?v=1&v=2' });
  assert.deepEqual(r.json().input, { v: ['1', '2'] });
  const deadline = svc.calls.at(-1)!.req.deadline!;
  assert.ok(deadline > Date.now() && deadline <= Date.now() + 10_000);
  assert.ok(svc.calls.at(-1)!.req.signal instanceof AbortSignal);
  await gw.close();
});

test('bad requests get their documented status and code, never a 500', async () => {
  const { gw, svc } = await gateway(echo);
  problem(await gw.app.inject({ url: '/api/request/nothing' }), 404, 'NOT_FOUND');
  problem(await gw.app.inject({ url: '/elsewhere' }), 404, 'NOT_FOUND');
  const r405 = await gw.app.inject({ method: 'PUT', url: '/api/request/todos/1' });
  problem(r405, 405, 'METHOD_NOT_ALLOWED');
  assert.equal(r405.headers['allow'], 'GET, POST, PATCH, DELETE, HEAD');
  const post = (payload: string, type = 'application/json') =>
    gw.app.inject({ method: 'POST', url: '/api/request/todos', payload, headers: { 'content-type': type } });
  problem(await post('{"a":'), 400, 'INVALID_JSON');
  problem(await post(''), 400, 'INVALID_JSON');
  problem(await post('[1,2]'), 400, 'INVALID_BODY');
  problem(await post('"text"'), 400, 'INVALID_BODY');
  problem(await post('null'), 400, 'INVALID_BODY');
  problem(await post(JSON.stringify({ big: 'x'.repeat(2000) })), 413, 'PAYLOAD_TOO_LARGE');
  problem(await post('a=1', 'application/x-www-form-urlencoded'), 415, 'UNSUPPORTED_MEDIA_TYPE');
  problem(await post('hello', 'text/plain'), 415, 'UNSUPPORTED_MEDIA_TYPE');
  problem(await post('{"__proto__":{"polluted":true}}'), 400, 'INVALID_BODY');
  problem(await post('{"a":{"constructor":{"prototype":{"polluted":true}}}}'), 400, 'INVALID_BODY');
  assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
  // +json media types are JSON too.
  assert.equal((await post('{"a":1}', 'application/merge-patch+json')).statusCode, 200);
  // None of the refused requests reached the saga service.
  assert.equal(svc.calls.length, 1);
  await gw.close();
});

test('X-Request-Id: the run id is always the gateway one; a sane incoming id is echoed as X-Correlation-Id, anything else is dropped', async () => {
  const { gw, svc } = await gateway(echo);
  let r = await gw.app.inject({ url: '/api/request/todos', headers: { 'x-request-id': 'abc-123.x:y' } });
  assert.match(String(r.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  assert.equal(r.headers['x-correlation-id'], 'abc-123.x:y');
  assert.equal(svc.calls.at(-1)!.req.requestId, r.headers['x-request-id']);
  assert.equal(svc.calls.at(-1)!.req.correlationId, 'abc-123.x:y');
  assert.equal(svc.calls.at(-1)!.req.caller, 'anon:127.0.0.1');
  r = await gw.app.inject({ url: '/api/request/todos', headers: { 'x-request-id': 'bad id <script>' } });
  assert.match(String(r.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  assert.equal(r.headers['x-correlation-id'], undefined);
  assert.equal(svc.calls.at(-1)!.req.correlationId, undefined);
  r = await gw.app.inject({ url: '/nope', headers: { 'x-request-id': 'x'.repeat(200) } });
  assert.match(String(r.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  assert.equal(r.json().requestId, r.headers['x-request-id']);
  await gw.close();
});

test('outcomes: SUCCESS with its status, ACK 202, FAIL as problem with its code, TIMEOUT 504, thrown errors hidden', async () => {
  const results: Record<string, SagaResult | Error> = {
    '/todos/created': { outcome: 'SUCCESS', http: 201, response: { id: 1 } },
    '/todos/ack': { outcome: 'ACK', http: 202, response: { taskId: 't1', status: 'WAITING' } },
    '/todos/missing': {
      outcome: 'FAIL',
      http: 404,
      error: { code: 'RECORD_NOT_FOUND', message: 'no todo 7', http: 404 },
    },
    '/todos/custom': {
      outcome: 'FAIL',
      http: 503,
      error: { code: 'TODOS_UNAVAILABLE', message: 'try later', http: 503 },
    },
    '/todos/forbidden': { outcome: 'FAIL', http: 403, error: { code: 'FORBIDDEN', message: 'Forbidden' } },
    '/todos/slow': { outcome: 'TIMEOUT', http: 504 },
    '/todos/throws': new Error('connect ECONNREFUSED 10.1.2.3:5432 at /srv/app/secret.js'),
  };
  const { gw } = await gateway((req) => {
    const r = results[req.path]!;
    if (r instanceof Error) throw r;
    return r;
  });
  let r = await gw.app.inject({ url: '/api/request/todos/created' });
  assert.equal(r.statusCode, 201);
  assert.deepEqual(r.json(), { id: 1 });
  r = await gw.app.inject({ url: '/api/request/todos/ack' });
  assert.equal(r.statusCode, 202);
  assert.deepEqual(r.json(), { taskId: 't1', status: 'WAITING' });
  assert.equal(
    problem(await gw.app.inject({ url: '/api/request/todos/missing' }), 404, 'RECORD_NOT_FOUND')['detail'],
    'no todo 7',
  );
  assert.equal(
    problem(await gw.app.inject({ url: '/api/request/todos/custom' }), 503, 'TODOS_UNAVAILABLE')['title'],
    'Todos Unavailable',
  );
  problem(await gw.app.inject({ url: '/api/request/todos/forbidden' }), 403, 'FORBIDDEN');
  problem(await gw.app.inject({ url: '/api/request/todos/slow' }), 504, 'SAGA_TIMEOUT');
  r = await gw.app.inject({ url: '/api/request/todos/throws' });
  const body = problem(r, 500, 'INTERNAL');
  assert.ok(
    !r.body.includes('10.1.2.3') && !r.body.includes('/srv') && !r.body.includes('ECONNREFUSED'),
    JSON.stringify(body),
  );
  await gw.close();
});

test('formats: Accept and extension (extension wins), 406 when impossible, errors stay problem+json', async () => {
  const { gw, svc } = await gateway(() =>
    ok({
      list: [
        { id: 1, name: '<b>x</b>' },
        { id: 2, formula: '=1+1' },
      ],
      plain: 'two todos',
    }),
  );
  let r = await gw.app.inject({ url: '/api/request/todos.csv', headers: { accept: 'application/xml' } });
  assert.match(String(r.headers['content-type']), /^text\/csv/);
  assert.equal(r.body, "id,name,formula\r\n1,<b>x</b>,\r\n2,,'=1+1\r\n");
  r = await gw.app.inject({ url: '/api/request/todos', headers: { accept: 'application/xml' } });
  assert.match(r.body, /^<\?xml.*<root><list><item><id>1<\/id><name>&lt;b&gt;x&lt;\/b&gt;<\/name><\/item>/);
  assert.equal(r.headers['vary'], 'Accept');
  r = await gw.app.inject({ url: '/api/request/todos.html' });
  assert.match(r.body, /<td>&lt;b&gt;x&lt;\/b&gt;<\/td>/);
  r = await gw.app.inject({ url: '/api/request/todos.txt' });
  assert.equal(r.body, 'two todos');
  assert.match(String(r.headers['content-type']), /^text\/plain/);
  const calls = svc.calls.length;
  problem(await gw.app.inject({ url: '/api/request/todos', headers: { accept: 'image/png' } }), 406, 'NOT_ACCEPTABLE');
  assert.equal(svc.calls.length, calls, 'an impossible Accept is refused before the saga runs');
  await gw.close();

  const { gw: gw2 } = await gateway(() => ok({ name: 'no list' }));
  problem(await gw2.app.inject({ url: '/api/request/todos.csv' }), 406, 'NOT_ACCEPTABLE');
  problem(await gw2.app.inject({ url: '/api/request/todos.txt' }), 406, 'NOT_ACCEPTABLE');
  await gw2.close();
});

test('dot segments are refused as they arrive on the wire (no normalisation by a client)', async () => {
  const svc = new ScriptedService(echo);
  const { base, close } = await startGateway(svc, { apis });
  const port = Number(new URL(base).port);
  for (const path of ['/api/request/todos/%2e%2e/feed', '/api/request/todos/../feed', '/api/request/todos/a%2Fb']) {
    const text = await rawHttp(port, `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    assert.match(text, /^HTTP\/1.1 404 /, path);
    assert.match(text, /"code":"NOT_FOUND"/);
  }
  assert.equal(svc.calls.length, 0);
  await close();
});

test('the saga run is aborted when the client disconnects (real socket)', async () => {
  let seen: SagaRequest | undefined;
  const svc = new ScriptedService(async (req) => {
    seen = req;
    await delay(5000, req.signal);
    return ok({ late: true });
  });
  const { base, close } = await startGateway(svc, { apis });
  const req = httpRequest(base + '/api/request/todos');
  req.on('error', () => {});
  req.end();
  while (!seen) await delay(10);
  req.destroy();
  const t0 = Date.now();
  while (!seen.signal!.aborted && Date.now() - t0 < 2000) await delay(10);
  assert.equal(seen.signal!.aborted, true);
  assert.equal(svc.inFlight, 0);
  await close();
});
