import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { EventSource } from 'eventsource';
import { silentLogger } from '../../src/core/logger.js';
import { createGateway, type Gateway } from '../../src/gateway/server.js';
import { startTestHost, type TestHost } from '../../src/testing/index.js';

/**
 * The gateway in front of the real engine (no fakes): todos created through the one-shot form,
 * then paged through by the stream form with `read.GetList` cursors, resumed mid-batch, and
 * followed live.
 */

const CONFIG = `
gateway:
  apis:
    - { path: /todos, runner: todo, methods: [GET, POST], public: true }
    - { path: /feed, runner: todo, public: true }
    - { path: /live, runner: todo, public: true }
    - { path: /admin, runner: todo, public: true }
  auth:
    apiKeys:
      - { name: viewer, sha256: "\${env:VIEWER_KEY_SHA}", roles: [viewer] }
      - { name: boss, sha256: "\${env:BOSS_KEY_SHA}", roles: [admin] }
  stream: { minWait: 10ms, defaultWait: 50ms }
states:
  todos: { type: memory }
runners:
  todo:
    handlers: [read, write]
    sagas:
      - id: create-todo
        path: /todos
        methods: [POST]
        steps:
          - { id: start, type: start, links: [{ to: create }] }
          - id: create
            type: event
            autoFail: true
            eventMeta: { handler: write, action: Create, version: 0, domain: todos, inputElement: parameters, outputElement: $.todo }
            links: [{ to: done }]
          - { id: done, type: success, http: 201, outputElement: todo }
      - id: feed
        path: /feed
        methods: [GET]
        steps:
          - { id: start, type: start, links: [{ to: page }] }
          - id: page
            type: event
            autoFail: true
            eventMeta: { handler: read, action: GetList, version: 0, domain: todos, inputElement: parameters, outputElement: $.page, parameters: { limit: 3 } }
            links: [{ to: shape }]
          - id: shape
            type: transform
            expression: '{ "list": page.list, "next": page.next, "continue": $exists(page.next), "wait": 0 }'
            links: [{ to: done }]
          - { id: done, type: success }
      - id: admin-report
        path: /admin
        methods: [GET]
        roles: [admin]
        steps:
          - { id: start, type: start, links: [{ to: done }] }
          - { id: done, type: success }
      - id: live
        path: /live
        methods: [GET]
        steps:
          - { id: start, type: start, links: [{ to: page }] }
          - id: page
            type: event
            autoFail: true
            eventMeta: { handler: read, action: GetList, version: 0, domain: todos, inputElement: parameters, outputElement: $.page, parameters: { limit: 3, follow: true } }
            links: [{ to: shape }]
          - id: shape
            type: transform
            expression: '{ "list": page.list, "next": page.next, "continue": true, "wait": "20ms" }'
            links: [{ to: done }]
          - { id: done, type: success }
`;

const sha = (key: string) => createHash('sha256').update(key).digest('hex');

async function start(): Promise<{ h: TestHost; gw: Gateway; base: string }> {
  const h = await startTestHost(CONFIG, { env: { VIEWER_KEY_SHA: sha('viewer-key'), BOSS_KEY_SHA: sha('boss-key') } });
  const gw = await createGateway({
    settings: h.settings,
    service: h.host,
    log: silentLogger(),
    ready: () => h.host.ready(),
  });
  const { port } = await gw.listen(0, '127.0.0.1');
  return { h, gw, base: `http://127.0.0.1:${port}` };
}

/** Collect a stream's todos until `stopAfter` (or its end); `titles` may be passed in to watch them arrive. */
function stream(
  url: string,
  stopAfter?: number,
  titles: string[] = [],
): Promise<{ titles: string[]; ids: string[]; ended: boolean }> {
  const es = new EventSource(url);
  const ids: string[] = [];
  return new Promise((resolve, reject) => {
    es.onmessage = (ev) => {
      titles.push((JSON.parse(ev.data) as { data: { title: string } }).data.title);
      ids.push(ev.lastEventId);
      if (stopAfter !== undefined && titles.length >= stopAfter) {
        es.close();
        resolve({ titles, ids, ended: false });
      }
    };
    es.addEventListener('end', () => {
      es.close();
      resolve({ titles, ids, ended: true });
    });
    es.addEventListener('error', (ev) => {
      const data = (ev as unknown as { data?: string }).data;
      if (data !== undefined) {
        es.close();
        reject(new Error(data));
      }
    });
  });
}

async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) assert.fail('timed out waiting');
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function create(base: string, title: string): Promise<void> {
  const res = await fetch(base + '/api/request/todos', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ title }),
  });
  assert.equal(res.status, 201, await res.text());
}

test('real engine: create through the one-shot form, page through the stream, resume mid-batch', async () => {
  const { h, gw, base } = await start();
  try {
    for (let i = 0; i < 10; i++) await create(base, `todo ${i}`);
    const ready = await (await fetch(base + '/readyz')).json();
    assert.equal((ready as { status: string }).status, 'ready');

    const all = await stream(base + '/api/stream/feed');
    assert.equal(all.ended, true);
    assert.equal(all.titles.length, 10);
    assert.deepEqual([...all.titles].sort(), Array.from({ length: 10 }, (_, i) => `todo ${i}`).sort());

    // Entry 4 is the second entry of the second page of 3: a mid-batch resume.
    const rest = await stream(`${base}/api/stream/feed?lastEventId=${encodeURIComponent(all.ids[4]!)}`);
    assert.deepEqual(rest.titles, all.titles.slice(5));
    assert.equal(rest.ended, true);

    // The one-shot form of the same saga: its first page, as CSV.
    const csv = await (await fetch(base + '/api/request/feed.csv')).text();
    const lines = csv.split('\r\n');
    assert.equal(lines.length, 5, 'a header, 3 rows and the final CRLF');
    assert.equal(lines[0], 'id,version,data');
  } finally {
    await gw.close();
    await h.close();
  }
});

test('real engine: a following stream sends todos created after it started', async () => {
  const { h, gw, base } = await start();
  try {
    for (let i = 0; i < 4; i++) await create(base, `old ${i}`);
    const arrived: string[] = [];
    const live = stream(base + '/api/stream/live', 6, arrived);
    // the stream has sent the todos that were there when it started: the next ones are new to it
    await until(() => arrived.length === 4);
    await create(base, 'new 1');
    await create(base, 'new 2');
    const got = await live;
    assert.deepEqual(got.titles.slice(4), ['new 1', 'new 2']);
    assert.deepEqual([...got.titles.slice(0, 4)].sort(), ['old 0', 'old 1', 'old 2', 'old 3']);
    await until(() => gw.stats().streams === 0); // the gateway notices the client closed
  } finally {
    await gw.close();
    await h.close();
  }
});

test("real engine: a saga's own roles come back through the gateway as 401 / 403 problems", async () => {
  const { h, gw, base } = await start();
  try {
    const get = async (headers: Record<string, string> = {}) => {
      const res = await fetch(base + '/api/request/admin', { headers });
      return { status: res.status, body: (await res.json()) as { code?: string } };
    };
    const anonymous = await get();
    assert.deepEqual([anonymous.status, anonymous.body.code], [401, 'UNAUTHORIZED']);
    const viewer = await get({ 'x-api-key': 'viewer-key' });
    assert.deepEqual([viewer.status, viewer.body.code], [403, 'FORBIDDEN']);
    const boss = await get({ 'x-api-key': 'boss-key' });
    assert.equal(boss.status, 200);
    // The same on the stream form, answered before the stream opens (issue 9, item 12).
    const res = await fetch(base + '/api/stream/admin', { headers: { 'x-api-key': 'viewer-key' } });
    assert.equal(res.status, 403);
    assert.equal(((await res.json()) as { code?: string }).code, 'FORBIDDEN');
  } finally {
    await gw.close();
    await h.close();
  }
});
