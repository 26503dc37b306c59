import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, symlink, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { silentLogger } from '../../src/core/logger.js';
import { createGateway } from '../../src/gateway/server.js';
import { ok, rawHttp, ScriptedService, settingsWith, startGateway } from './harness.js';

test('/healthz, /readyz (503 when a check is down, fails or hangs) and /metrics', async () => {
  let checks: () => Promise<Record<string, boolean>> = async () => ({ nats: true, todos: true });
  const svc = new ScriptedService(() => ok({ a: 1 }));
  const gw = await createGateway({
    settings: settingsWith(),
    service: svc,
    log: silentLogger(),
    ready: () => checks(),
  });
  let r = await gw.app.inject({ url: '/healthz' });
  assert.equal(r.statusCode, 200);
  assert.deepEqual(r.json(), { status: 'ok' });
  assert.ok(r.headers['x-request-id']);
  r = await gw.app.inject({ url: '/readyz' });
  assert.equal(r.statusCode, 200);
  assert.deepEqual(r.json(), { status: 'ready', checks: { nats: true, todos: true } });
  checks = async () => ({ nats: false, todos: true });
  r = await gw.app.inject({ url: '/readyz' });
  assert.equal(r.statusCode, 503);
  assert.deepEqual(r.json(), { status: 'unavailable', checks: { nats: false, todos: true } });
  checks = async () => {
    throw new Error('db at 10.0.0.5 refused');
  };
  r = await gw.app.inject({ url: '/readyz' });
  assert.equal(r.statusCode, 503);
  assert.ok(!r.body.includes('10.0.0.5'));

  await gw.app.inject({ url: '/api/request/a' });
  await gw.app.inject({ url: '/api/request/a' });
  await gw.app.inject({
    method: 'POST',
    url: '/api/request/a',
    payload: '{',
    headers: { 'content-type': 'application/json' },
  });
  r = await gw.app.inject({ url: '/metrics' });
  assert.equal(r.statusCode, 200);
  assert.match(String(r.headers['content-type']), /^text\/plain/);
  assert.match(r.body, /sagaway_http_requests_total{route="request",api="\/",status="200"} 2/);
  assert.match(r.body, /sagaway_http_requests_total{route="request",api="\/",status="400"} 1/);
  assert.match(r.body, /sagaway_http_requests_total{route="ops",api="",status="503"} 2/);
  assert.match(r.body, /sagaway_http_request_duration_seconds_count{route="request"} 3/);
  for (const name of [
    'sagaway_streams_active',
    'sagaway_stream_polls_total',
    'sagaway_stream_events_total',
    'sagaway_stream_bytes_total',
    'sagaway_stream_resumes_total',
  ]) {
    assert.match(r.body, new RegExp(`^${name} `, 'm'), name);
  }
  // Each gateway has its own registry.
  const other = await createGateway({ settings: settingsWith(), service: svc, log: silentLogger() });
  assert.doesNotMatch(await other.metrics.registry.metrics(), /status="200"/);
  await other.close();
  await gw.close();
});

test('stream metrics count polls, events and bytes', async () => {
  const svc = new ScriptedService(() => ok({ list: [{ a: 1 }, { a: 2 }] }));
  const { gw, base, close } = await startGateway(svc);
  const text = await (await fetch(base + '/api/stream/x')).text();
  const m = await gw.metrics.registry.metrics();
  assert.match(m, /sagaway_stream_polls_total 1/);
  assert.match(m, /sagaway_stream_events_total 3/);
  assert.match(m, new RegExp(`sagaway_stream_bytes_total ${Buffer.byteLength(text)}`));
  assert.match(m, /sagaway_http_requests_total{route="stream",api="\/",status="200"} 1/);
  await close();
});

test('logs never hold Authorization, cookies, API keys or query tokens', async () => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  const log = pino({ level: 'trace' }, sink);
  const svc = new ScriptedService((req) =>
    req.path === '/boom' ? Promise.reject(new Error('boom')) : ok({ list: [{ a: 1 }] }),
  );
  const settings = settingsWith({
    apis: [{ path: '/', runner: 'r', roles: [], public: false }],
    auth: {
      jwt: {
        secret: 'secret-secret-secret-secret-1234',
        algorithms: ['HS256'],
        rolesClaim: 'roles',
        principalClaim: 'sub',
        clockToleranceMs: 0,
      },
      apiKeys: [],
      queryToken: true,
    },
  });
  const gw = await createGateway({ settings, service: svc, log });
  const { port } = await gw.listen(0, '127.0.0.1');
  const secrets = ['SECRET-BEARER-abc', 'SECRET-COOKIE-def', 'SECRET-APIKEY-ghi', 'SECRET-QUERY-jkl'];
  await gw.app.inject({ url: '/api/request/x', headers: { authorization: `Bearer ${secrets[0]}` } });
  await gw.app.inject({ url: '/api/request/x', headers: { cookie: `sagaway_token=${secrets[1]}` } });
  await gw.app.inject({ url: '/api/request/boom', headers: { 'x-api-key': secrets[2] } });
  await (await fetch(`http://127.0.0.1:${port}/api/stream/x?access_token=${secrets[3]}`)).text();
  await gw.close();
  const all = lines.join('');
  assert.ok(lines.length >= 4, 'requests were logged');
  assert.match(all, /"path":"\/api\/stream\/x"/);
  for (const s of secrets) assert.ok(!all.includes(s), `${s} leaked into the logs`);
});

test('static files: served from the folder, nothing outside it', async () => {
  const base = await mkdtemp(join(tmpdir(), 'sagaway-static-'));
  const root = join(base, 'public');
  await mkdir(join(root, 'sub'), { recursive: true });
  await writeFile(join(root, 'index.html'), '<h1>home</h1>');
  await writeFile(join(root, 'sub', 'app.js'), 'console.log(1)');
  await writeFile(join(base, 'secret.txt'), 'TOP SECRET');
  await symlink(join(base, 'secret.txt'), join(root, 'link.txt'));
  const svc = new ScriptedService(() => ok({}));
  const { base: url, close } = await startGateway(svc, { static: root });
  let res = await fetch(url + '/');
  assert.equal(res.status, 200);
  assert.equal(await res.text(), '<h1>home</h1>');
  assert.match(res.headers.get('content-type')!, /^text\/html/);
  res = await fetch(url + '/sub/app.js');
  assert.match(res.headers.get('content-type')!, /^text\/javascript/);
  assert.equal(await res.text(), 'console.log(1)');
  res = await fetch(url + '/nope.html');
  assert.equal(res.status, 404);
  assert.equal(((await res.json()) as { code: string }).code, 'NOT_FOUND');
  res = await fetch(url + '/link.txt');
  assert.equal(res.status, 404, 'a symlink out of the folder is not followed');
  await res.text();
  const port = Number(new URL(url).port);
  for (const p of [
    '/../secret.txt',
    '/%2e%2e/secret.txt',
    '/sub/..%2f..%2fsecret.txt',
    '/..%5csecret.txt',
    '/%00index.html',
  ]) {
    const text = await rawHttp(port, `GET ${p} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    assert.match(text, /^HTTP\/1.1 404 /, p);
    assert.ok(!text.includes('TOP SECRET'), p);
  }
  // API routes still win over static files.
  res = await fetch(url + '/api/request/x');
  assert.equal(res.status, 200);
  await res.text();
  await close();
  await rm(base, { recursive: true, force: true });
});

test('HEAD on the one-shot form answers the headers without a body', async () => {
  const svc = new ScriptedService(() => ok({ a: 1 }));
  const { base, close } = await startGateway(svc);
  const res = await fetch(base + '/api/request/x', { method: 'HEAD' });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type')!, /^application\/json/);
  assert.equal(await res.text(), '');
  assert.equal(svc.calls[0]!.req.method, 'HEAD');
  await close();
});
