import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, test } from 'node:test';
import { silentLogger } from '../../src/core/logger.js';
import { createGateway, type Gateway } from '../../src/gateway/server.js';
import { openApiDocument } from '../../src/gateway/apis/openapi-document.js';
import { startTestHost, testClock, type TestHost } from '../../src/testing/index.js';

/**
 * Two gaps of issue 21 closed: a saga with a wait step is not served on `/api/stream/<path>`
 * (each poll would park a new run: 400 WAIT_NOT_STREAMABLE, refused before the stream opens, and
 * by the runner before any step runs), and the wait routes (`/api/runs/*`, `/api/signals/*`,
 * `/api/callbacks/*`, GET included) are counted by the gateway's rate limit: a flood gets 429.
 * The real engine, a SQLite journal, the gateway on a loopback socket.
 */

const KEY = 'key-boss-0123456789';
const sha = (k: string) => createHash('sha256').update(k).digest('hex');
const MAX = 5;

const CONFIG = `
gateway:
  limits: { rate: { max: ${MAX}, window: 1m } }
  apis:
    - { path: /expenses, runner: r, methods: [GET, POST], public: true }
  auth:
    apiKeys:
      - { name: boss, sha256: "${sha(KEY)}", roles: [manager] }
states:
  jr: { type: sqlite, file: ./journal.db }
runners:
  r:
    handlers: [./office.mjs]
    journal: jr
    sagas:
      - id: expense
        path: /expenses
        methods: [GET, POST]
        steps:
          - { id: start, type: start, links: [{ to: reserve }] }
          - { id: reserve, type: event, eventMeta: { handler: office, action: Reserve, version: 0 }, links: [{ to: approval }] }
          - id: approval
            type: wait
            signal: { name: approval, roles: [manager] }
            timeout: 1h
            links: [{ to: ok, when: [SIGNAL] }, { to: late, when: ['*'] }]
          - { id: ok, type: success }
          - { id: late, type: fail, error: { code: LATE, http: 504 } }
`;

const OFFICE = `
const g = globalThis.__streamOffice ??= { reserved: 0 };
export default { name: 'office', actions: { Reserve: { 0: () => { g.reserved++; return {}; } } } };
`;
const reserved = () => (globalThis as unknown as { __streamOffice: { reserved: number } }).__streamOffice.reserved;

let host: TestHost;
let gateway: Gateway;
let base = '';

before(async () => {
  host = await startTestHost(CONFIG, { files: { 'office.mjs': OFFICE }, clock: testClock() });
  gateway = await createGateway({
    settings: host.settings,
    service: host.host,
    log: silentLogger(),
    status: host.host.statusReader(),
    waits: host.host.waits.signals(),
  });
  const { port } = await gateway.listen(0, '127.0.0.1');
  base = `http://127.0.0.1:${port}`;
});
after(async () => {
  await gateway?.close();
  await host?.close();
});

test('a saga with a wait step on /api/stream: 400 WAIT_NOT_STREAMABLE before the stream opens; nothing runs or parks', async () => {
  const res = await fetch(`${base}/api/stream/expenses`, { headers: { accept: 'text/event-stream' } });
  assert.equal(res.status, 400);
  assert.match(res.headers.get('content-type') ?? '', /application\/problem\+json/);
  const problem = (await res.json()) as { code: string; detail: string };
  assert.equal(problem.code, 'WAIT_NOT_STREAMABLE');
  assert.match(problem.detail, /\/api\/request\/<path> only/);
  assert.equal(reserved(), 0);
  assert.equal((await host.host.waits.stats()).parked, 0);
  // the one-shot form of the same saga parks as it should
  const parked = await fetch(`${base}/api/request/expenses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  assert.equal(parked.status, 202);
  assert.equal(reserved(), 1);
  assert.equal((await host.host.waits.stats()).parked, 1);
  // the OpenAPI document lists the one-shot form only
  const paths = Object.keys((openApiDocument(host.settings) as { paths: Record<string, unknown> }).paths);
  assert.deepEqual(paths, ['/api/request/expenses']);
});

test('the runner refuses a stream poll of it too (a gateway that does not know the saga), before any step', async () => {
  const before = reserved();
  const result = await host.host.run('r', {
    method: 'GET',
    path: '/expenses',
    input: {},
    query: {},
    requestId: 'poll-1',
    runId: 'poll-1.1',
    user: null,
    form: 'stream',
  });
  assert.equal(result.outcome, 'FAIL');
  assert.equal(result.http, 400);
  assert.equal(result.error?.code, 'WAIT_NOT_STREAMABLE');
  assert.equal(reserved(), before);
});

/** A gateway of its own (a fresh count) on the same host; its address. */
async function freshGateway(): Promise<{ base: string; close(): Promise<void> }> {
  const g = await createGateway({
    settings: host.settings,
    service: host.host,
    log: silentLogger(),
    status: host.host.statusReader(),
    waits: host.host.waits.signals(),
  });
  const { port } = await g.listen(0, '127.0.0.1');
  return { base: `http://127.0.0.1:${port}`, close: () => g.close() };
}

test('the wait routes are counted by the rate limit: a flood of each gets 429 RATE_LIMITED', async () => {
  const json = { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEY }, body: '{}' };
  const routes: [string, RequestInit][] = [
    ['/api/signals/approval', { ...json, body: JSON.stringify({ key: 'k', data: {} }) }],
    ['/api/runs/no-such-run/signals/approval', json],
    ['/api/runs/no-such-run/cancel', json],
    ['/api/callbacks/not.a-token', {}],
    ['/api/callbacks/not.a-token', { method: 'POST' }],
  ];
  for (const [url, init] of routes) {
    const what = `${init.method ?? 'GET'} ${url}`;
    const g = await freshGateway();
    try {
      const statuses: number[] = [];
      let last: Response | undefined;
      for (let i = 0; i <= MAX; i++) {
        last = await fetch(g.base + url, init);
        if (i < MAX) await last.arrayBuffer();
        statuses.push(last.status);
      }
      // within the quota the route answers as it does (404, 202...); the request after it is 429
      assert.ok(
        statuses.slice(0, MAX).every((s) => s !== 429),
        `${what}: ${statuses.join(',')}`,
      );
      assert.equal(statuses[MAX], 429, `${what}: ${statuses.join(',')}`);
      assert.equal(((await last!.json()) as { code: string }).code, 'RATE_LIMITED');
      assert.ok(Number(last!.headers.get('retry-after')) > 0);
    } finally {
      await g.close();
    }
  }
});
