import { test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../../src/core/logger.js';
import { createGateway, type Gateway } from '../../src/gateway/server.js';
import { startTestHost, type TestHost } from '../../src/testing/index.js';

/**
 * Issue 9 item 2: a response larger than `gateway.limits.maxResponse` is refused with 502
 * RESPONSE_TOO_LARGE problem+json in every format (the renderers stop at the budget), and so is
 * a stream poll whose events pass it; responses within the budget are served whole, and the
 * refusal loses nothing (the records are all there, page by page).
 */

const RECORD = 20 * 1024;

const CONFIG = `
gateway:
  apis: [{ path: /, runner: todo, public: true }]
  limits: { maxResponse: 256kb }
  stream: { minWait: 10ms, defaultWait: 10ms }
states:
  todos: { type: memory }
runners:
  todo:
    handlers: [read, write]
    sagas:
      - id: create
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
      - id: all
        path: /all
        methods: [GET]
        steps:
          - { id: start, type: start, links: [{ to: page }] }
          - id: page
            type: event
            autoFail: true
            eventMeta: { handler: read, action: GetList, version: 0, domain: todos, inputElement: parameters, outputElement: $.page, parameters: { limit: 1000 } }
            links: [{ to: shape }]
          - { id: shape, type: transform, expression: '{ "list": page.list.data, "next": page.next }', links: [{ to: done }] }
          - { id: done, type: success }
      - id: few
        path: /few
        methods: [GET]
        steps:
          - { id: start, type: start, links: [{ to: page }] }
          - id: page
            type: event
            autoFail: true
            eventMeta: { handler: read, action: GetList, version: 0, domain: todos, inputElement: parameters, outputElement: $.page, parameters: { limit: 5 } }
            links: [{ to: shape }]
          - { id: shape, type: transform, expression: '{ "list": page.list.data, "next": page.next, "continue": $exists(page.next), "wait": 0 }', links: [{ to: done }] }
          - { id: done, type: success }
`;

async function start(): Promise<{ h: TestHost; gw: Gateway; base: string }> {
  const h = await startTestHost(CONFIG);
  const gw = await createGateway({ settings: h.settings, service: h.host, log: silentLogger() });
  const { port } = await gw.listen(0, '127.0.0.1');
  return { h, gw, base: `http://127.0.0.1:${port}` };
}

test('a response over maxResponse is 502 RESPONSE_TOO_LARGE in every format; smaller ones are whole; nothing is lost', async () => {
  const { h, gw, base } = await start();
  try {
    for (let i = 0; i < 20; i++) {
      const res = await fetch(base + '/api/request/todos', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id: `t${String(i).padStart(2, '0')}`, n: i, body: String(i % 10).repeat(RECORD) }),
      });
      assert.equal(res.status, 201);
    }
    for (const ext of ['', '.json', '.xml', '.html', '.csv']) {
      const res = await fetch(base + '/api/request/all' + ext);
      assert.equal(res.status, 502, ext);
      assert.equal(res.headers.get('content-type'), 'application/problem+json; charset=utf-8');
      const problem = (await res.json()) as Record<string, unknown>;
      assert.equal(problem['code'], 'RESPONSE_TOO_LARGE');
      assert.equal(problem['status'], 502);
      assert.equal(typeof problem['requestId'], 'string');
      assert.equal(problem['requestId'], res.headers.get('x-request-id'));
      assert.ok(!JSON.stringify(problem).includes('0000000000'), 'no record data in the problem');
    }
    // within the budget: whole, and paging through collects every record exactly once
    const seen: number[] = [];
    let next: string | undefined;
    do {
      const res = await fetch(base + '/api/request/few' + (next ? `?previous=${encodeURIComponent(next)}` : ''));
      assert.equal(res.status, 200);
      const body = (await res.json()) as { list: Array<{ n: number; body: string }>; next?: string };
      for (const r of body.list) {
        assert.equal(r.body.length, RECORD);
        seen.push(r.n);
      }
      next = body.next;
    } while (next !== undefined);
    assert.deepEqual(
      seen,
      Array.from({ length: 20 }, (_, i) => i),
    );
  } finally {
    await gw.close();
    await h.close();
  }
});

test('a stream poll over maxResponse ends with event: error RESPONSE_TOO_LARGE and a final id', async () => {
  const { h, gw, base } = await start();
  try {
    for (let i = 0; i < 20; i++) {
      await fetch(base + '/api/request/todos', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ n: i, body: 'x'.repeat(RECORD) }),
      });
    }
    const res = await fetch(base + '/api/stream/all');
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.ok(!text.includes('data: {"n":'), 'no entry of the oversized poll was sent');
    const error = /event: error\nid: (\S+)\ndata: (.*)\n/.exec(text);
    assert.ok(error, text.slice(0, 300));
    assert.equal((JSON.parse(error[2]!) as { code: string }).code, 'RESPONSE_TOO_LARGE');
    // the final id: a reconnect is told to stop (204), not to poll again
    const again = await fetch(base + '/api/stream/all', { headers: { 'last-event-id': error[1]! } });
    assert.equal(again.status, 204);
    // a stream of small polls over the same records delivers all of them
    const fine = await (await fetch(base + '/api/stream/few')).text();
    assert.equal(fine.match(/^data: \{"n":/gm)?.length, 20);
    assert.match(fine, /event: end/);
  } finally {
    await gw.close();
    await h.close();
  }
});
