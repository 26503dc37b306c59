import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/load.js';
import { createGateway, type Gateway } from '../../src/gateway/server.js';
import { BUILTIN_HANDLERS } from '../../src/handlers/index.js';
import { checkHandlers } from '../../src/runner/check-handlers.js';
import { Host } from '../../src/runner/host.js';
import { createSecretSource } from '../../src/runner/executor/secrets.js';
import { createState } from '../../src/states/index.js';
import { createCluster } from '../../src/systems/index.js';
import { pgUnavailableReason, skipOrFail } from '../states/pg-available.js';

/**
 * The examples of examples/ served for real: the gateway and the runners in process, as
 * `sagaway start` wires them, over real sockets, driven with fetch. PostgreSQL and the rest
 * example's upstream are real processes; every address is on 127.0.0.1.
 */

interface Served {
  base: string;
  /** every log line the gateway and runners wrote (debug level, no redaction) */
  logs: string[];
  close(): Promise<void>;
}

/** Load an example with its own environment and serve it on a free loopback port. */
async function serve(config: string, env: NodeJS.ProcessEnv): Promise<Served> {
  const { settings } = await loadConfig(config, {
    env,
    check: (s, report) => checkHandlers(s, BUILTIN_HANDLERS, report),
  });
  const logs: string[] = [];
  // A logger without the production redaction: whatever reaches it is what a log shipper would see
  // if a field escaped the redaction list, so secrets must not reach it at all.
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logs.push(chunk.toString('utf8'));
      done();
    },
  });
  const log = pino({ level: 'debug' }, sink);
  const host = await Host.start({
    settings,
    log,
    builtins: BUILTIN_HANDLERS,
    createState,
    createCluster,
    secrets: createSecretSource(settings.secrets, env),
  });
  let gateway: Gateway;
  try {
    gateway = await createGateway({ settings, service: host, log, ready: () => host.ready() });
  } catch (e) {
    await host.close();
    throw e;
  }
  const { port } = await gateway.listen(0, '127.0.0.1');
  return {
    base: `http://127.0.0.1:${port}`,
    logs,
    async close() {
      await gateway.close();
      await host.close();
    },
  };
}

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
  text: string;
}

async function call(url: string, method = 'GET', body?: unknown): Promise<Answer> {
  const r = await fetch(url, {
    method,
    ...(body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
  });
  const text = await r.text();
  return {
    status: r.status,
    headers: r.headers,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
    text,
  };
}

/** A problem+json answer with the given status and code, whose requestId is the header's. */
function assertProblem(a: Answer, status: number, code: string): void {
  assert.equal(a.status, status, a.text);
  assert.match(a.headers.get('content-type') ?? '', /^application\/problem\+json/);
  assert.equal(a.body['code'], code, a.text);
  assert.equal(a.body['status'], status);
  assert.equal(a.body['requestId'], a.headers.get('x-request-id'));
}

describe('examples/tasks through the gateway: the approval flow', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sagaway-e2e-tasks-'));
  let s: Served;
  before(async () => {
    s = await serve('examples/tasks/sagaway.yaml', { TASKS_DB: join(dir, 'tasks.db') });
  });
  after(async () => {
    await s?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a small amount: StartTask ACK, Follow Ack, the condition approves it at once (200 DONE)', async () => {
    const a = await call(`${s.base}/api/request/expenses`, 'POST', { amount: 40, what: 'taxi' });
    assert.equal(a.status, 200, a.text);
    assert.equal(a.body['status'], 'DONE');
    assert.deepEqual(a.body['result'], { approved: true, by: 'auto' });
    const got = await call(`${s.base}/api/request/approvals/${a.body['taskId'] as string}`);
    assert.equal(got.body['status'], 'DONE');
  });

  test('a large amount waits (202), is decided through the second API, then reads DONE', async () => {
    const started = await call(`${s.base}/api/request/expenses`, 'POST', { amount: 900, what: 'laptop' });
    assert.equal(started.status, 202, started.text);
    assert.equal(started.body['status'], 'WAITING');
    const taskId = started.body['taskId'];
    assert.equal(typeof taskId, 'string');
    const url = `${s.base}/api/request/approvals/${encodeURIComponent(taskId as string)}`;

    const waiting = await call(url);
    assert.equal(waiting.status, 200);
    assert.equal(waiting.body['status'], 'WAITING');

    assertProblem(await call(url, 'POST', { approved: 'yes' }), 400, 'INVALID_INPUT');
    assert.equal((await call(url)).body['status'], 'WAITING', 'an invalid decision changes nothing');

    const decided = await call(url, 'POST', { approved: true, comment: 'fine' });
    assert.equal(decided.status, 200, decided.text);
    assert.equal(decided.body['status'], 'DONE');
    assert.deepEqual(decided.body['result'], { approved: true, comment: 'fine', by: 'anonymous' }); // a public API

    const done = await call(url);
    assert.equal(done.body['status'], 'DONE');
    assert.deepEqual(done.body['result'], decided.body['result']);

    assertProblem(await call(url, 'POST', { approved: false }), 409, 'TASK_NOT_WAITING');
    assert.deepEqual((await call(url)).body['result'], decided.body['result'], 'a second decision changes nothing');
  });

  test('unknown task 404, invalid expense 400, a method the API does not expose 405', async () => {
    assertProblem(await call(`${s.base}/api/request/approvals/no-such-task`), 404, 'RECORD_NOT_FOUND');
    assertProblem(await call(`${s.base}/api/request/expenses`, 'POST', { amount: -1 }), 400, 'INVALID_INPUT');
    const r = await call(`${s.base}/api/request/expenses`, 'DELETE');
    assert.equal(r.status, 405, r.text);
  });
});

const PG_URL = process.env['SAGAWAY_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const pgReason = await pgUnavailableReason(PG_URL);

describe('examples/postgres through the gateway against a real PostgreSQL', () => {
  if (pgReason !== undefined) {
    test('postgres example', { skip: skipOrFail(pgReason) }, () => undefined);
    return;
  }
  // A table of its own per run, so concurrent runs and earlier failures never collide.
  const table = `e2e_products_${process.pid}_${Date.now()}`;
  let s: Served;
  before(async () => {
    s = await serve('examples/postgres/sagaway.yaml', { DATABASE_URL: PG_URL, PRODUCTS_TABLE: table });
  });
  after(async () => {
    await s?.close();
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    try {
      await c.query(`drop table if exists "${table}", "${table}_idem"`);
    } finally {
      await c.end();
    }
  });
  const api = (path: string) => `${s.base}/api/request/products${path}`;

  test('create, conflict, validation; the rows are in the configured table', async () => {
    const lamp = await call(api(''), 'POST', { id: 'lamp', name: 'Desk lamp', price: 24.5, category: 'home' });
    assert.equal(lamp.status, 201, lamp.text);
    assert.deepEqual(lamp.body, { id: 'lamp', version: 1, data: { name: 'Desk lamp', price: 24.5, category: 'home' } });
    const mug = await call(api(''), 'POST', { name: 'Mug', price: 6 });
    assert.equal(mug.status, 201);
    assert.match(mug.body['id'] as string, /^[0-9a-f-]{36}$/);
    assert.equal((await call(api(''), 'POST', { name: 'Pen', price: 1.5, id: 'pen' })).status, 201);
    assertProblem(await call(api(''), 'POST', { id: 'lamp', name: 'again', price: 1 }), 409, 'RECORD_EXISTS');
    assertProblem(await call(api(''), 'POST', { name: '', price: 1 }), 400, 'INVALID_INPUT');

    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    try {
      const rows = await c.query<{ id: string; price: string }>(
        `select id, data->>'price' as price from "${table}" order by id`,
      );
      assert.equal(rows.rowCount, 3);
      assert.equal(rows.rows.find((r) => r.id === 'lamp')?.price, '24.5');
    } finally {
      await c.end();
    }
  });

  test('list: sorted by name, keyset pages through `previous`', async () => {
    const p1 = await call(api('?limit=2'));
    assert.equal(p1.status, 200, p1.text);
    const names = (p: Answer) => (p.body['list'] as Array<{ data: { name: string } }>).map((r) => r.data.name);
    assert.deepEqual(names(p1), ['Desk lamp', 'Mug']);
    assert.equal(p1.body['continue'], true);
    const p2 = await call(api(`?limit=2&previous=${encodeURIComponent(p1.body['next'] as string)}`));
    assert.deepEqual(names(p2), ['Pen']);
    assert.equal(p2.body['continue'], false);
    assert.equal(p2.body['next'], undefined);
    assertProblem(await call(api('?previous=not-a-cursor')), 400, 'INVALID_CURSOR');
  });

  test('list over SSE: one event per record across pages, then `end`', async () => {
    const r = await fetch(`${s.base}/api/stream/products?limit=1`);
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /^text\/event-stream/);
    const text = await r.text(); // the server closes after `end`
    const data = text
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)) as { id?: string; reason?: string });
    assert.deepEqual(
      data.map((d) => d.id ?? d.reason),
      ['lamp', data[1]?.id, 'pen', 'complete'],
    );
    assert.match(text, /event: end/);
  });

  test('the named query binds its value; SQL text in it is a 400, not a statement', async () => {
    const cheap = await call(api('/search?maxPrice=10'));
    assert.equal(cheap.status, 200, cheap.text);
    assert.deepEqual(
      (cheap.body['list'] as Array<{ id: string }>).map((r) => r.id),
      ['pen', (cheap.body['list'] as Array<{ id: string }>)[1]?.id],
    );
    assert.equal((cheap.body['list'] as unknown[]).length, 2, 'Pen 1.5 and Mug 6, cheapest first');
    assertProblem(await call(api('/search?maxPrice=abc')), 400, 'VALIDATION_FAILED');
    const evil = encodeURIComponent(`1; drop table "${table}"`);
    assertProblem(await call(api(`/search?maxPrice=${evil}`)), 400, 'VALIDATION_FAILED');
    assertProblem(await call(api('/search')), 400, 'INVALID_INPUT');
    assert.equal((await call(api('/lamp'))).status, 200, 'the table is still there');
  });

  test('get, update with optimistic concurrency, delete', async () => {
    const got = await call(api('/lamp'));
    assert.equal(got.body['version'], 1);
    assertProblem(await call(api('/nope')), 404, 'RECORD_NOT_FOUND');

    const v2 = await call(api('/lamp'), 'PATCH', { changes: { price: 19 }, version: 1 });
    assert.equal(v2.status, 200, v2.text);
    assert.deepEqual(v2.body, { id: 'lamp', version: 2, data: { name: 'Desk lamp', price: 19, category: 'home' } });
    assertProblem(await call(api('/lamp'), 'PATCH', { changes: { price: 1 }, version: 1 }), 409, 'STALE_VERSION');
    assertProblem(await call(api('/lamp'), 'PATCH', { price: 1 }), 400, 'INVALID_INPUT');
    const v3 = await call(api('/lamp'), 'PATCH', { changes: { stock: 3 } });
    assert.equal(v3.body['version'], 3, 'without a version: any version');
    assert.equal((v3.body['data'] as { price: number }).price, 19, 'a patch keeps the other fields');
    assertProblem(await call(api('/nope'), 'PATCH', { changes: { a: 1 } }), 404, 'RECORD_NOT_FOUND');

    assertProblem(await call(api('/lamp?version=1'), 'DELETE'), 409, 'STALE_VERSION');
    const del = await call(api('/lamp?version=3'), 'DELETE');
    assert.equal(del.status, 200, del.text);
    assert.deepEqual(del.body, { id: 'lamp', deleted: true });
    assertProblem(await call(api('/lamp')), 404, 'RECORD_NOT_FOUND');
    assertProblem(await call(api('/lamp'), 'DELETE'), 404, 'RECORD_NOT_FOUND');
  });
});

/** The rest example's upstream script as a child process on a free loopback port. */
interface Upstream {
  origin: string;
  /** access lines it printed: `METHOD URL STATUS` */
  seen: string[];
  child: ChildProcess;
}

/** Wait until the upstream has printed `line` (its stdout arrives after its answer). */
async function waitSeen(up: Upstream, line: string): Promise<void> {
  const end = Date.now() + 2000;
  while (!up.seen.includes(line)) {
    if (Date.now() > end) assert.fail(`the upstream did not log "${line}"; it logged:\n${up.seen.join('\n')}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * The upstream lines printed since `from`, up to a marker request sent straight to the
 * upstream: its access log is in request order, so once the marker shows, every earlier request
 * has shown too.
 */
async function seenSince(up: Upstream, from: number, token: string): Promise<string[]> {
  const marker = `/v1/rates/EUR?marker=${randomUUID()}`;
  const r = await fetch(up.origin + marker, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(r.status, 200);
  await r.arrayBuffer();
  await waitSeen(up, `GET ${marker} 200`);
  return up.seen.slice(from, -1);
}

async function startUpstream(token: string): Promise<Upstream> {
  const child = spawn(process.execPath, ['examples/rest/upstream.mjs', '--port', '0'], {
    env: { PATH: process.env['PATH'] ?? '', UPSTREAM_TOKEN: token },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const seen: string[] = [];
  const lines = createInterface({ input: child.stdout! });
  const origin = await new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('upstream did not start')), 5000);
    child.once('exit', (code) => reject(new Error(`upstream exited with ${code}`)));
    lines.on('line', (line) => {
      const m = /^listening (http:\/\/127\.0\.0\.1:\d+)$/.exec(line);
      if (m) {
        clearTimeout(t);
        resolve(m[1] as string);
      } else seen.push(line);
    });
  });
  return { origin, seen, child };
}

describe('examples/rest through the gateway, against its upstream script', () => {
  const token = `tok-${randomUUID()}`;
  const env: NodeJS.ProcessEnv = {};
  let up: Upstream;
  let s: Served;
  const answers: Answer[] = [];
  const get = async (path: string, method = 'GET', body?: unknown) => {
    const a = await call(`${s.base}/api/request${path}`, method, body);
    answers.push(a);
    return a;
  };
  before(async () => {
    up = await startUpstream(token);
    env['UPSTREAM_URL'] = up.origin;
    env['SAGAWAY_SECRET_UPSTREAM_TOKEN'] = token;
    s = await serve('examples/rest/sagaway.yaml', env);
  });
  after(async () => {
    await s?.close();
    if (up && up.child.exitCode === null) {
      const exited = new Promise((r) => up.child.once('exit', r));
      up.child.kill('SIGTERM');
      await exited;
    }
  });

  test('GET a rate, with the bearer token from the secrets', async () => {
    const a = await get('/rates/usd');
    assert.equal(a.status, 200, a.text);
    assert.deepEqual(a.body, { base: 'EUR', currency: 'USD', rate: 1.08 });
    await waitSeen(up, 'GET /v1/rates/usd 200');
  });

  test('POST passes the body through; upstream 400 and 404 become the API errors', async () => {
    const a = await get('/convert', 'POST', { from: 'USD', to: 'GBP', amount: 100 });
    assert.equal(a.status, 200, a.text);
    assert.deepEqual(a.body, { from: 'USD', to: 'GBP', amount: 100, result: 78.7 });
    assertProblem(await get('/convert', 'POST', { from: 'USD', amount: 100 }), 400, 'VALIDATION_FAILED');
    assertProblem(await get('/convert', 'POST', { from: 'USD', to: 'XXX', amount: 1 }), 404, 'RATE_NOT_FOUND');
    assertProblem(await get('/rates/xyz'), 404, 'RATE_NOT_FOUND');
    await waitSeen(up, 'GET /v1/rates/xyz 404');
  });

  test('path values that would escape the base path or add a query never reach the upstream', async () => {
    const before = (await seenSince(up, 0, token)).length + 1;
    // The gateway refuses dot segments and encoded slashes in the saga path itself.
    assertProblem(await get('/rates/..%2F..%2Fadmin'), 404, 'NOT_FOUND');
    assertProblem(await get('/rates/%2E%2E'), 404, 'NOT_FOUND');
    // `?` decoded into the path parameter reaches the handler, which refuses it (VALIDATION_FAILED),
    // so the injected value can never add query parameters; the saga answers its own 502.
    assertProblem(await get('/rates/usd%3Fadmin=1'), 502, 'RATES_UNAVAILABLE');
    assert.deepEqual(await seenSince(up, before, token), [], 'nothing reached the upstream');
  });

  test('a rotated (wrong) or missing secret: 502 that says nothing about the upstream', async () => {
    env['SAGAWAY_SECRET_UPSTREAM_TOKEN'] = 'wrong';
    try {
      assertProblem(await get('/rates/usd'), 502, 'RATES_UNAVAILABLE');
      await waitSeen(up, 'GET /v1/rates/usd 401'); // the secret is read at each call
      delete env['SAGAWAY_SECRET_UPSTREAM_TOKEN'];
      const before = up.seen.length;
      const a = await get('/rates/usd');
      assertProblem(a, 502, 'RATES_UNAVAILABLE');
      assert.deepEqual(await seenSince(up, before, token), [], 'no call without the secret (INJECT_UNRESOLVED)');
      assert.doesNotMatch(a.text, /127\.0\.0\.1|upstream|401/i);
    } finally {
      env['SAGAWAY_SECRET_UPSTREAM_TOKEN'] = token;
    }
    assert.equal((await get('/rates/chf')).status, 200, 'the restored secret applies at once');
  });

  test('the token never appears in a response or a log line', () => {
    assert.ok(answers.length >= 8);
    assert.ok(s.logs.length > 0, 'the gateway logged something');
    for (const a of answers) {
      assert.ok(!a.text.includes(token), a.text);
      for (const [, v] of a.headers) assert.ok(!v.includes(token));
    }
    for (const line of s.logs) assert.ok(!line.includes(token), line);
  });
});
