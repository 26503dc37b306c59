import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { SignJWT } from 'jose';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import { DEFAULT_CONSOLE } from '../../src/config/settings.js';
import { silentLogger } from '../../src/core/logger.js';
import { MASK, type RunRecord } from '../../src/core/trace.js';
import { CONSOLE_CSP } from '../../src/gateway/console/routes.js';
import { startTestHost } from '../../src/testing/index.js';
import { createGateway } from '../../src/gateway/server.js';
import { canaryForms, secrets } from '../security/inject-canary.js';
import { CANARY, CONSOLE_CONFIG, ECHO_MODULE } from './console-fixture.js';
import { consoleGateway } from './console-gateway.js';

/** The console in process: access rules over HTTP, the page's CSP, the model, and the feed with the canary. */

function assertNoCanary(text: string, where: string) {
  for (const form of canaryForms(CANARY)) assert.ok(!text.includes(form), `${where} holds a form of the canary`);
}

test('loopback only without roles: other addresses, foreign Host names and proxied requests get the plain 404', async () => {
  const c = await consoleGateway();
  try {
    const get = (url: string, headers: Record<string, string> = {}, remoteAddress = '127.0.0.1') =>
      c.gw.app.inject({ method: 'GET', url, headers: { host: 'localhost:8080', ...headers }, remoteAddress });
    for (const url of ['/console', '/console/console.js', '/console/api/model', '/console/api/journal', '/']) {
      const local = await get(url);
      assert.equal(local.statusCode, url === '/' ? 302 : 200, `${url} from loopback`);
      for (const [why, res] of [
        ['another address', await get(url, {}, '10.1.2.3')],
        ['an IPv6 address', await get(url, {}, '2001:db8::7')],
        ['a foreign Host (DNS rebinding)', await get(url, { host: 'evil.example' })],
        ['a reverse proxy on this machine', await get(url, { 'x-forwarded-for': '203.0.113.9' })],
      ] as const) {
        assert.equal(res.statusCode, 404, `${url} from ${why}`);
        assert.equal(res.json().code, 'NOT_FOUND');
        assert.equal(res.json().detail, 'no route serves this path', 'the same 404 as any unknown path');
      }
    }
    assert.equal((await get('/console', { host: '127.0.0.5:1' }, '127.0.0.5')).statusCode, 200, '127/8 is loopback');
    assert.equal((await get('/console', { host: '[::1]:8080' }, '::1')).statusCode, 200);
    assert.equal((await get('/console', {}, '::ffff:127.0.0.1')).statusCode, 200);
  } finally {
    await c.close();
  }
});

test('trustProxy without roles: the console is off (a warning says why); asked for, the file is refused', async () => {
  const c = await consoleGateway(CONSOLE_CONFIG.replace('gateway:\n', 'gateway:\n  trustProxy: true\n'));
  try {
    assert.equal(c.h.settings.gateway.console?.enabled, false);
    const res = await c.gw.app.inject({
      method: 'GET',
      url: '/console/api/model',
      headers: { host: 'localhost:8080', 'x-forwarded-for': '127.0.0.1' },
      remoteAddress: '127.0.0.1',
    });
    assert.equal(res.statusCode, 404, 'even a local client through a local proxy');
  } finally {
    await c.close();
  }
  const dir = mkdtempSync(join(tmpdir(), 'sagaway-console-proxy-'));
  try {
    const file = join(dir, 'sagaway.yaml');
    writeFileSync(file, 'gateway:\n  trustProxy: [10.0.0.2]\n');
    const { warnings } = await loadConfig(file);
    assert.ok(
      warnings.some((w) => /the console is off: behind a proxy it needs gateway\.console\.roles/.test(w.message)),
    );
    writeFileSync(file, 'gateway:\n  trustProxy: true\n  console: { enabled: true }\n');
    await assert.rejects(
      loadConfig(file),
      /sagaway\.yaml:3:\d+ gateway\.console\.enabled: behind a proxy \(gateway\.trustProxy\) the console needs gateway\.console\.roles/,
    );
    writeFileSync(file, 'gateway:\n  trustProxy: true\n  console: { enabled: false }\n');
    assert.deepEqual((await loadConfig(file)).warnings, [], 'switched off on purpose: nothing to say');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('behind a TCP forwarder on this machine (no X-Forwarded-For), a remote client is refused under trustProxy', async () => {
  const h = await startTestHost(CONSOLE_CONFIG.replace('gateway:\n', 'gateway:\n  trustProxy: true\n'), {
    files: { 'echo.mjs': ECHO_MODULE },
    secrets,
  });
  // Settings made by code, with the console on and no roles: the gateway itself must refuse.
  const settings = { ...h.settings, gateway: { ...h.settings.gateway, console: { ...DEFAULT_CONSOLE } } };
  const gw = await createGateway({ settings, service: h.host, log: silentLogger(), traces: [h.host.traces] });
  const { port } = await gw.listen(0, '127.0.0.1');
  // What an stunnel, socat or ssh -L does: bytes piped both ways, no header added.
  const forwarder = createServer((client) => {
    const upstream = connect(port, '127.0.0.1');
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => forwarder.listen(0, '127.0.0.1', resolve));
  const fport = (forwarder.address() as AddressInfo).port;
  try {
    for (const path of ['/console', '/console/api/model']) {
      const res = await fetch(`http://localhost:${fport}${path}`);
      assert.equal(res.status, 404, `${path} through the forwarder`);
      assert.equal(((await res.json()) as { code: string }).code, 'NOT_FOUND');
    }
    const direct = await fetch(`http://localhost:${port}/console/api/model`);
    assert.equal(direct.status, 404, 'nor directly: behind a proxy the console needs roles');
    await direct.arrayBuffer();
  } finally {
    forwarder.close();
    await gw.close();
    await h.close();
  }
});

test('with roles, an open feed is rechecked at each heartbeat: a token that expires ends it with UNAUTHORIZED', async () => {
  const secret = 'console-feed-secret-of-at-least-32-bytes!';
  const config = CONSOLE_CONFIG.replace(
    'gateway:\n',
    `gateway:\n  console: { roles: [ops] }\n  auth:\n    jwt: { secret: "${secret}", algorithms: [HS256], rolesClaim: roles, clockTolerance: 0 }\n`,
  );
  const c = await consoleGateway(config);
  try {
    const token = await new SignJWT({ roles: ['ops'] })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('op')
      .setExpirationTime(Math.floor(Date.now() / 1000) + 2)
      .sign(new TextEncoder().encode(secret));
    const { port } = await c.gw.listen(0, '127.0.0.1');
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), 8000);
    try {
      const feed = await fetch(`http://127.0.0.1:${port}/console/api/feed`, {
        headers: { authorization: `Bearer ${token}` },
        signal: controller.signal,
      });
      assert.equal(feed.status, 200);
      const body = await feed.text(); // ends only when the server ends the feed
      assert.match(body, /event: error\ndata: \{[^\n]*"code":"UNAUTHORIZED"/);
    } finally {
      clearTimeout(timer);
    }
  } finally {
    await c.close();
  }
});

test('the page: strict CSP, no inline script or style, assets from the console itself', async () => {
  const c = await consoleGateway();
  try {
    const res = await c.gw.app.inject({ method: 'GET', url: '/console' });
    assert.equal(res.headers['content-security-policy'], CONSOLE_CSP);
    assert.ok(!/unsafe-inline|unsafe-eval|https?:/.test(CONSOLE_CSP));
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    const html = res.body;
    const scripts = [...html.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
    assert.ok(scripts.length > 0 && scripts.every((s) => /\bsrc="\/console\//.test(s)), scripts.join());
    assert.ok(!/<style\b|\sstyle=|\son[a-z]+=/i.test(html), 'no inline style or event handler attribute');
    assert.ok(!/https?:\/\/(?!www\.w3\.org\/2000\/svg)/.test(html), 'nothing from elsewhere (CDN, font)');
    const js = await c.gw.app.inject({ method: 'GET', url: '/console/console.js' });
    assert.equal(js.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.ok(!/https?:\/\/(?!www\.w3\.org\/2000\/svg)/.test(js.body), 'the script loads nothing from elsewhere');
  } finally {
    await c.close();
  }
});

test('the model: configured colours, defaults per kind, a colour that is not one falls back, edge labels, effective eventMeta masked', async () => {
  const c = await consoleGateway();
  try {
    const res = await c.gw.app.inject({ method: 'GET', url: '/console/api/model' });
    assertNoCanary(res.body, 'the model');
    const model = res.json();
    assert.deepEqual(
      model.apis.map((a: any) => [a.path, a.request, a.stream, a.auth.public]),
      [
        ['/orders', '/api/request/orders', '/api/stream/orders', true],
        ['/feed', '/api/request/feed', '/api/stream/feed', true],
      ],
    );
    assert.equal(model.openapi, '/api/openapi.json');
    const saga = model.sagas.find((s: any) => s.id === 'place-order');
    const node = (id: string) => saga.graph.nodes.find((n: any) => n.id === id);
    assert.deepEqual(
      [node('check').label, node('check').fill, node('check').stroke],
      ['Quantity valid?', '#fff3b0', '#9a6700'],
    );
    assert.equal(node('check').description, 'qty must be a positive number');
    assert.deepEqual(
      [node('start').label, node('start').fill],
      ['start', '#f6f8fa'],
      'no name: the id, default colours',
    );
    assert.equal(node('tag').fill, '#ddf4ff', 'a url() fill is not a colour: the event default');
    assert.equal(node('rejected').stroke, '#cf222e');
    for (const n of saga.graph.nodes) assert.ok(n.x > 0 && n.y > 0 && n.width > 0, `${n.id} is laid out`);
    const edge = (from: string, to: string) => saga.graph.edges.find((e: any) => e.from === from && e.to === to);
    assert.equal(edge('check', 'store').label, 'true');
    assert.equal(edge('tag', 'failed').label, '* (p2)');
    assert.equal(edge('start', 'check').label, '');
    assert.ok(edge('store', 'tag').points.length >= 2);

    const tag = saga.settings.tag;
    assert.equal(tag.eventMeta.parameters.token, MASK, 'a token key is masked even as a placeholder');
    assert.equal(tag.eventMeta.parameters.note, 'Bearer #{{CANARY}}', 'placeholders are shown, never resolved');
    assert.equal(tag.effective.length, 1);
    const eff = tag.effective[0];
    assert.equal(eff.runner, 'shop');
    assert.equal(eff.stream, 'audit');
    assert.equal(eff.settings.action, 'Show', 'the structural action override');
    assert.equal(eff.settings.handler, 'echo');
    assert.equal(eff.settings.parameters.channel, 'web', 'the action default');
    assert.equal(eff.settings.parameters.audited, true, 'the stream override');
    assert.equal(eff.settings.parameters.apiKey, MASK, 'a literal under a credential key is masked');
    assert.ok(!res.body.includes('literal-key-shown-masked'));
    assert.equal(saga.settings.check.expression, 'parameters.qty > 0');
  } finally {
    await c.close();
  }
});

test('the feed: runs traced only while watched, each with outcome, status, path and snapshots; never the canary', async () => {
  const c = await consoleGateway();
  const { port } = await c.gw.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${port}`;
  const controller = new AbortController();
  try {
    await fetch(`${base}/api/request/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"qty": 1}',
    });
    assert.equal(c.h.host.traces.active, false, 'nobody watches: nothing is traced');
    const feed = await fetch(`${base}/console/api/feed`, { signal: controller.signal });
    assert.equal(feed.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    const reader = feed.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    const until = async (done: () => boolean) => {
      while (!done()) {
        const { value, done: end } = await reader.read();
        if (end) throw new Error('the feed ended');
        text += value;
      }
    };
    await until(() => text.includes('event: hello'));
    assert.equal(c.h.host.traces.active, true);
    const ok = await fetch(`${base}/api/request/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ qty: 2, password: 'hunter2-not-shown' }),
    });
    assert.equal(ok.status, 201);
    const okId = ok.headers.get('x-request-id')!;
    const bad = await fetch(`${base}/api/request/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"qty": 0}',
    });
    const badId = bad.headers.get('x-request-id')!;
    await until(() => text.includes(badId));
    const runs = text
      .split('\n')
      .filter((l) => l.startsWith('data: {"requestId"'))
      .map((l) => JSON.parse(l.slice(6)));
    assert.equal(runs.length, 2, 'the run made before anyone watched was not traced');
    const [good, failed] = runs;
    assert.equal(good.requestId, okId);
    assert.deepEqual(
      [good.outcome, good.http, good.sagaId, good.method, good.path],
      ['SUCCESS', 201, 'place-order', 'POST', '/orders'],
    );
    assert.deepEqual(
      good.steps.map((s: any) => [s.step, s.status]),
      [
        ['start', 'SUCCESS'],
        ['check', 'SUCCESS'],
        ['store', 'SUCCESS'],
        ['tag', 'SUCCESS'],
        ['done', 'SUCCESS'],
      ],
    );
    assert.equal(good.steps[1].value, 'true');
    assert.ok(good.steps.every((s: any) => typeof s.ms === 'number' && s.ms >= 0));
    const tagged = JSON.parse(good.steps[3].payload);
    assert.equal(tagged.parameters.password, MASK);
    assert.equal(tagged.tagged.saw.audited, true, 'the snapshot is the payload after the step');
    assert.equal(failed.requestId, badId);
    assert.deepEqual([failed.outcome, failed.http, failed.error.code], ['FAIL', 400, 'VALIDATION_FAILED']);
    assert.deepEqual(failed.steps.at(-1).step, 'rejected');
    assert.deepEqual(failed.steps.at(-1).status, 'FAIL');
    assert.ok(!text.includes('hunter2-not-shown'));
    assertNoCanary(text, 'the feed');
    assert.ok(text.includes('Bearer '), 'the echoed note is there, scrubbed of the secret');
  } finally {
    controller.abort();
    await c.close();
  }
});

test('with roles: the same auth as the APIs (401 without a credential, 403 without the role), from any address', async () => {
  const sha = (k: string) => createHash('sha256').update(k).digest('hex');
  const config = CONSOLE_CONFIG.replace(
    'gateway:\n',
    `gateway:\n  console: { roles: [ops], path: /ops/console }\n  auth:\n    apiKeys:\n      - { name: ops, sha256: ${sha('ops-key')}, roles: [ops] }\n      - { name: dev, sha256: ${sha('dev-key')}, roles: [dev] }\n`,
  );
  const c = await consoleGateway(config);
  try {
    // Over a real socket: the role check is the whole gate here, whatever the address.
    const { port } = await c.gw.listen(0, '127.0.0.1');
    const get = async (url: string, headers: Record<string, string> = {}) => {
      const res = await fetch(`http://127.0.0.1:${port}${url}`, { headers });
      return { statusCode: res.status, headers: Object.fromEntries(res.headers), body: await res.text() };
    };
    assert.equal((await get('/ops/console')).statusCode, 401);
    assert.equal((await get('/ops/console')).headers['www-authenticate'], 'Bearer realm="sagaway"');
    assert.equal((await get('/ops/console', { 'x-api-key': 'wrong' })).statusCode, 401);
    assert.equal((await get('/ops/console', { 'x-api-key': 'dev-key' })).statusCode, 403);
    assert.equal((await get('/ops/console/api/model', { 'x-api-key': 'dev-key' })).statusCode, 403);
    assert.equal((await get('/ops/console/api/feed', { 'x-api-key': 'dev-key' })).statusCode, 403);
    const page = await get('/ops/console', { 'x-api-key': 'ops-key' });
    assert.equal(page.statusCode, 200);
    assert.ok(page.body.includes('src="/ops/console/console.js"'), 'assets under the configured path');
    assert.equal((await get('/ops/console/api/model', { 'x-api-key': 'ops-key' })).statusCode, 200);
    assert.equal((await get('/console', { 'x-api-key': 'ops-key' })).statusCode, 404, 'not at the default path');
    // From another address too (the loopback rule does not apply once roles are set).
    const outside = await c.gw.app.inject({
      method: 'GET',
      url: '/ops/console',
      headers: { host: 'console.example', 'x-api-key': 'ops-key' },
      remoteAddress: '198.51.100.4',
    });
    assert.equal(outside.statusCode, 200);
  } finally {
    await c.close();
  }
});

test('enabled: false serves no console at all, and / stays a 404', async () => {
  const c = await consoleGateway(CONSOLE_CONFIG.replace('gateway:\n', 'gateway:\n  console: { enabled: false }\n'));
  try {
    for (const url of ['/', '/console', '/console/api/feed']) {
      assert.equal((await c.gw.app.inject({ method: 'GET', url })).statusCode, 404, url);
    }
  } finally {
    await c.close();
  }
});

test('a console path that would hide a route of the gateway is a configuration error', async () => {
  for (const path of ['/api', '/api/console', '/healthz', '/metrics']) {
    await assert.rejects(
      startTestHost(CONSOLE_CONFIG.replace('gateway:\n', `gateway:\n  console: { path: ${path} }\n`), {
        files: { 'echo.mjs': ECHO_MODULE },
      }),
      (err: any) => err.code === 'CONFIG_INVALID' && /gateway\.console\.path|route of the gateway/.test(err.message),
      path,
    );
  }
});

test('a feed reconnecting with Last-Event-ID gets only the runs after it', async () => {
  const c = await consoleGateway();
  const { port } = await c.gw.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${port}`;
  const read = async (headers: Record<string, string>, runs: number) => {
    const controller = new AbortController();
    const res = await fetch(`${base}/console/api/feed`, { headers, signal: controller.signal });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while ((text.match(/event: run/g) ?? []).length < runs || !text.includes('event: hello')) {
      text += (await reader.read()).value;
    }
    controller.abort();
    return text;
  };
  try {
    // An open feed keeps runs traced while they are made.
    const controller = new AbortController();
    await fetch(`${base}/console/api/feed`, { signal: controller.signal });
    const post = (qty: number) =>
      fetch(`${base}/api/request/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ qty }),
      });
    await post(1);
    await post(2);
    await post(0);
    const all = await read({}, 3);
    const ids = [...all.matchAll(/^id: (.+)$/gm)].map((m) => m[1]!);
    assert.equal(ids.length, 3);
    const after = await read({ 'last-event-id': ids[1]! }, 1);
    assert.deepEqual(
      [...after.matchAll(/^id: (.+)$/gm)].map((m) => m[1]),
      [ids[2]],
    );
    const foreign = await read({ 'last-event-id': `old.${ids[1]!.split('.')[1]}` }, 3);
    assert.equal((foreign.match(/event: run/g) ?? []).length, 3, 'an id of another process life replays the ring');
    controller.abort();
  } finally {
    await c.close();
  }
});

test('journaled runs are listed from the journal, newest first, without payload or response', async () => {
  const config = CONSOLE_CONFIG.replace(
    'states:\n  orders: { type: memory }',
    'states:\n  orders: { type: memory }\n  runs: { type: sqlite, file: ./runs.db }',
  ).replace('runners:\n  shop:\n', 'runners:\n  shop:\n    journal: runs\n');
  assert.notEqual(config, CONSOLE_CONFIG);
  const c = await consoleGateway(config);
  try {
    const post = (qty: number) =>
      c.gw.app.inject({ method: 'POST', url: '/api/request/orders', payload: { qty }, remoteAddress: '127.0.0.1' });
    const first = await post(1);
    const second = await post(0);
    assert.equal(first.statusCode, 201);
    assert.equal(second.statusCode, 400);
    const res = await c.gw.app.inject({ method: 'GET', url: '/console/api/journal', remoteAddress: '127.0.0.1' });
    assert.equal(res.statusCode, 200);
    const runs = (res.json() as { runs: Record<string, unknown>[] }).runs;
    assert.deepEqual(
      runs.map((r) => [r['requestId'], r['sagaId'], r['outcome'], r['http']]),
      [
        [second.headers['x-request-id'], 'place-order', 'FAIL', 400],
        [first.headers['x-request-id'], 'place-order', 'SUCCESS', 201],
      ],
    );
    assert.ok(!('payload' in runs[0]!) && !('response' in runs[0]!));
  } finally {
    await c.close();
  }
});

test('gateway.console.mask from the file reaches the traces; built-in parts and card numbers are masked too', async () => {
  const h = await startTestHost(`
gateway:
  console: { mask: [nickname, /^x-.*-ref$/] }
  apis: [{ path: /echo, runner: app, public: true }]
runners:
  app:
    sagas:
      - id: echo
        path: /echo
        methods: [POST]
        steps:
          - { id: start, type: start, links: [{ to: same }] }
          - { id: same, type: transform, expression: '$', links: [{ to: done }] }
          - { id: done, type: success }
`);
  const runs: RunRecord[] = [];
  const stop = h.host.traces.listen((r) => runs.push(r));
  try {
    const input = {
      nickname: 'grace',
      'X-Order-Ref': 'r1',
      userPin: '1234',
      pw: 'p',
      paid: '4111 1111 1111 1111',
      qty: 2,
    };
    const res = await h.run('/echo', { method: 'POST', input });
    assert.equal(res.outcome, 'SUCCESS');
    assert.ok(runs.length > 0, 'the run was traced');
    const step = runs[0]!.steps.find((s) => s.step === 'same');
    const shown = (JSON.parse(step!.payload!) as { parameters: Record<string, unknown> }).parameters;
    for (const k of ['nickname', 'X-Order-Ref', 'userPin', 'pw', 'paid']) assert.equal(shown[k], MASK, k);
    assert.equal(shown['qty'], 2);
  } finally {
    stop();
    await h.close();
  }
  const dir = mkdtempSync(join(tmpdir(), 'sagaway-mask-'));
  try {
    const file = join(dir, 'sagaway.yaml');
    writeFileSync(file, 'gateway:\n  console:\n    mask: [ok, "/a(b/"]\n');
    await assert.rejects(loadConfig(file), /sagaway\.yaml:3:\d+ gateway\.console\.mask\[1\]: not a regular expression/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
