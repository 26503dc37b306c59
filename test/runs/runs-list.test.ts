import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { silentLogger } from '../../src/core/logger.js';
import { createGateway, type Gateway } from '../../src/gateway/server.js';
import { startTestHost, type TestHost } from '../../src/testing/index.js';
import type { RunSummary } from '../../src/core/runs.js';

/**
 * `GET /api/runs` over a real socket (issue 22): journaled runs newest first, paged by cursor
 * with nothing repeated or missed, filtered by saga, status and time, behind `gateway.admin`
 * (its roles; without roles loopback clients only, by the console's rules).
 */

const KEYS = { ops: 'key-ops-0123456789', user: 'key-user-0123456789' };
const sha = (k: string) => createHash('sha256').update(k).digest('hex');

const config = (admin: string, extra = '') => `
gateway:
  ${extra}
  apis:
    - { path: /ok, runner: r, methods: [POST], public: true }
    - { path: /bad, runner: r, methods: [POST], public: true }
  auth:
    apiKeys:
      - { name: ops, sha256: "${sha(KEYS.ops)}", roles: [ops] }
      - { name: user, sha256: "${sha(KEYS.user)}", roles: [user] }
  ${admin}
states:
  jr: { type: sqlite, file: ./journal.db }
runners:
  r:
    handlers: [./h.mjs]
    journal: jr
    sagas:
      - id: okay
        path: /ok
        methods: [POST]
        steps:
          - { id: start, type: start, links: [{ to: one }] }
          - { id: one, type: event, eventMeta: { handler: h, action: Ok, version: 0, outputElement: $.one }, links: [{ to: done }] }
          - { id: done, type: success }
      - id: broken
        path: /bad
        methods: [POST]
        steps:
          - { id: start, type: start, links: [{ to: one }] }
          - { id: one, type: event, autoFail: true, eventMeta: { handler: h, action: Fail, version: 0 }, links: [{ to: done }] }
          - { id: done, type: success }
`;

const HANDLER = `
export default {
  name: 'h',
  actions: {
    Ok: { 0: () => ({ fine: true }) },
    Fail: { 0: () => { throw Object.assign(new Error('no'), { code: 'BROKEN', http: 502 }); } },
  },
};
`;

interface World {
  host: TestHost;
  gateway: Gateway;
  base: string;
  close(): Promise<void>;
}

async function world(admin = '', extra = ''): Promise<World> {
  const host = await startTestHost(config(admin, extra), { files: { 'h.mjs': HANDLER } });
  const gateway = await createGateway({
    settings: host.settings,
    service: host.host,
    log: silentLogger(),
    status: host.host.statusReader(),
    ...host.host.runAdmin(),
  });
  const { port } = await gateway.listen(0, '127.0.0.1');
  return {
    host,
    gateway,
    base: `http://127.0.0.1:${port}`,
    close: async () => {
      await gateway.close();
      await host.close();
    },
  };
}

async function list(w: World, query: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${w.base}/api/runs${query}`, { headers });
  return { status: res.status, body: (await res.json()) as { runs: RunSummary[]; next?: string; code?: string } };
}

/** A request with a Host header of our choosing (fetch does not let one be set). */
function withHost(w: World, method: string, path: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${w.base}${path}`,
      { method, headers: { host, 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end(method === 'POST' ? '{}' : undefined);
  });
}

test('GET /api/runs: newest first, paged without repeats, filtered by saga, status and time', async (t) => {
  const w = await world();
  t.after(() => w.close());
  const ids: string[] = [];
  for (let i = 0; i < 7; i++) {
    const path = i % 3 === 2 ? '/bad' : '/ok';
    const res = await fetch(`${w.base}/api/request${path}`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    await res.arrayBuffer();
    ids.push(res.headers.get('x-request-id')!);
  }
  const all = await list(w, '');
  assert.equal(all.status, 200);
  assert.equal(all.body.runs.length, 7);
  assert.equal(all.body.next, undefined);
  const times = all.body.runs.map((r) => r.startedAt);
  assert.deepEqual(
    times,
    [...times].sort((a, b) => b - a),
    'newest first',
  );
  assert.deepEqual(new Set(all.body.runs.map((r) => r.runId)), new Set(ids), 'every run, by its run id');
  const failed = all.body.runs.filter((r) => r.sagaId === 'broken');
  assert.equal(failed.length, 2);
  for (const r of failed) {
    assert.equal(r.outcome, 'FAIL');
    assert.equal(r.errorCode, 'BROKEN');
    assert.equal(r.failedStep, 'one');
    assert.equal(r.status, 'DONE');
  }

  // pages of 2: the same runs in the same order, none twice
  const paged: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await list(w, `?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
    assert.equal(page.status, 200);
    assert.ok(page.body.runs.length <= 2);
    paged.push(...page.body.runs.map((r) => r.runId));
    cursor = page.body.next;
    pages++;
  } while (cursor !== undefined && pages < 10);
  assert.deepEqual(
    paged,
    all.body.runs.map((r) => r.runId),
  );
  assert.equal(pages, 4);

  const bySaga = await list(w, '?saga=broken');
  assert.deepEqual(
    bySaga.body.runs.map((r) => r.runId),
    failed.map((r) => r.runId),
  );
  assert.equal((await list(w, '?status=RUNNING')).body.runs.length, 0);
  assert.equal((await list(w, '?status=DONE&saga=okay')).body.runs.length, 5);

  // since (inclusive) and until (exclusive), in epoch ms or ISO 8601
  const third = all.body.runs[2]!;
  const since = await list(w, `?since=${third.startedAt}`);
  assert.ok(since.body.runs.every((r) => r.startedAt >= third.startedAt));
  assert.ok(since.body.runs.some((r) => r.runId === third.runId));
  const until = await list(w, `?until=${new Date(third.startedAt).toISOString()}`);
  assert.ok(until.body.runs.length > 0 && until.body.runs.every((r) => r.startedAt < third.startedAt));
  assert.equal(since.body.runs.length + until.body.runs.length, 7);

  // refusals: problem+json with stable codes
  assert.equal((await list(w, '?status=LOST')).body.code, 'VALIDATION_FAILED');
  assert.equal((await list(w, '?limit=0')).body.code, 'VALIDATION_FAILED');
  assert.equal((await list(w, '?limit=201')).body.code, 'VALIDATION_FAILED');
  assert.equal((await list(w, '?since=yesterday')).body.code, 'VALIDATION_FAILED');
  assert.equal((await list(w, `?saga=${'x'.repeat(129)}`)).body.code, 'VALIDATION_FAILED'); // past a name's 128
  assert.equal((await list(w, '?cursor=bm90LWEtY3Vyc29y')).body.code, 'INVALID_CURSOR');
  assert.equal((await list(w, `?cursor=${'a'.repeat(600)}`)).body.code, 'INVALID_CURSOR');
});

test('GET /api/runs without admin roles: loopback only, by the console rules', async (t) => {
  const w = await world();
  t.after(() => w.close());
  assert.equal((await list(w, '')).status, 200);
  // a page of another site whose name resolves to 127.0.0.1 (DNS rebinding), or a local proxy
  assert.equal(await withHost(w, 'GET', '/api/runs', 'localhost:8080'), 200);
  assert.equal(await withHost(w, 'GET', '/api/runs', 'evil.example'), 404);
  assert.equal((await list(w, '', { 'x-forwarded-for': '203.0.113.9' })).status, 404);
  // a redrive or abort is refused alike
  assert.equal(await withHost(w, 'POST', '/api/runs/x/redrive', 'evil.example'), 404);
  assert.equal(await withHost(w, 'POST', '/api/runs/x/abort', 'evil.example'), 404);
});

test('GET /api/runs behind trustProxy without roles: nobody', async (t) => {
  const w = await world('', 'trustProxy: true');
  t.after(() => w.close());
  assert.equal((await list(w, '')).status, 404);
});

test('GET /api/runs with gateway.admin roles: the credential and one of its roles', async (t) => {
  const w = await world('admin: { roles: [ops] }');
  t.after(() => w.close());
  assert.equal((await list(w, '')).status, 401, 'loopback is not enough once roles are set');
  assert.equal((await list(w, '', { 'x-api-key': KEYS.user })).status, 403);
  assert.equal((await list(w, '', { 'x-api-key': 'key-nobody-0123456789' })).status, 401);
  const ok = await list(w, '', { 'x-api-key': KEYS.ops });
  assert.equal(ok.status, 200);
  assert.deepEqual(ok.body.runs, []);
});
