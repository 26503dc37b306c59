import { test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../../src/core/logger.js';
import { createGateway } from '../../src/gateway/server.js';
import { startTestHost } from '../../src/testing/index.js';

/**
 * Issue 9 item 2: one list page is bounded in bytes whatever its `limit`. The case (1 MB
 * records, a saga that lists 1000 of them per request) now reads pages of at most `maxPageSize`
 * (default 4mb) from every state, each with a `next`, and paging through them delivers every
 * record exactly once.
 */

function config(state: string): string {
  return `
gateway:
  apis: [{ path: /, runner: todo, public: true }]
states:
  todos: ${state}
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
      - id: list
        path: /todos
        methods: [GET]
        steps:
          - { id: start, type: start, links: [{ to: page }] }
          - id: page
            type: event
            autoFail: true
            eventMeta: { handler: read, action: GetList, version: 0, domain: todos, inputElement: parameters, outputElement: $.page, parameters: { limit: 1000 } }
            links: [{ to: shape }]
          - { id: shape, type: transform, expression: '{ "list": page.list.data.n, "next": page.next }', links: [{ to: done }] }
          - { id: done, type: success }
`;
}

async function pageThrough(state: string, records: number, size: number): Promise<number[][]> {
  const h = await startTestHost(config(state));
  const gw = await createGateway({ settings: h.settings, service: h.host, log: silentLogger() });
  const { port } = await gw.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${port}`;
  try {
    for (let i = 0; i < records; i++) {
      const res = await fetch(base + '/api/request/todos', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ n: i, pad: 'x'.repeat(size) }),
      });
      assert.equal(res.status, 201);
    }
    const pages: number[][] = [];
    let next: string | undefined;
    do {
      const res = await fetch(base + '/api/request/todos' + (next ? `?previous=${encodeURIComponent(next)}` : ''));
      assert.equal(res.status, 200);
      const body = (await res.json()) as { list: number[] | number; next?: string };
      pages.push(Array.isArray(body.list) ? body.list : [body.list]);
      next = body.next;
      assert.ok(pages.length <= records, 'paging ends');
    } while (next !== undefined);
    return pages;
  } finally {
    await gw.close();
    await h.close();
  }
}

for (const [name, state] of [
  ['memory', '{ type: memory }'],
  ['sqlite', '{ type: sqlite, file: ":memory:" }'],
] as const) {
  test(`${name}: 1 MB records, limit 1000: pages of at most 4mb (the default), every record once`, async () => {
    const pages = await pageThrough(state, 10, 1_000_000 - 100);
    assert.deepEqual(
      pages.map((p) => p.length),
      [4, 4, 2],
    );
    assert.deepEqual(
      pages.flat(),
      Array.from({ length: 10 }, (_, i) => i),
    );
  });

  test(`${name}: maxPageSize from the configuration; a record over it still makes progress`, async () => {
    const small = state.replace('}', ', maxPageSize: 64kb }');
    const pages = await pageThrough(small, 12, 30 * 1024);
    assert.deepEqual(
      pages.map((p) => p.length),
      [2, 2, 2, 2, 2, 2],
    );
    assert.deepEqual(
      pages.flat(),
      Array.from({ length: 12 }, (_, i) => i),
    );
    const tiny = state.replace('}', ', maxPageSize: 1kb }');
    const alone = await pageThrough(tiny, 3, 4096);
    assert.deepEqual(alone, [[0], [1], [2]]);
  });
}
