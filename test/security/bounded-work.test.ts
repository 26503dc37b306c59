import { test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../../src/core/logger.js';
import { createGateway } from '../../src/gateway/server.js';
import { startTestHost } from '../../src/testing/index.js';

/**
 * Issue 19 item 1: the work of one request is bounded by its JSON values, not only its bytes.
 * A 1 MB body of 330,000 empty arrays (under `bodyLimit`) kept the event loop for about a second
 * and every list of what it stored for longer: it is now 413 TOO_MANY_VALUES, counted before it
 * is parsed, and nothing is stored. A record over `states.<alias>.maxValues` is refused the same
 * way, and a list page stops at that many values with `next`. Item 3: numbers JSON.parse turns
 * into Infinity and lone surrogates are 400 INVALID_JSON instead of being stored as null / as
 * text no encoding can carry.
 */

function config(state: string, limits = ''): string {
  return `
gateway:
  apis: [{ path: /, runner: todo, public: true }]
  ${limits}
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
            eventMeta: { handler: read, action: GetList, version: 0, domain: todos, inputElement: parameters, outputElement: $, parameters: { limit: 1000 } }
            links: [{ to: done }]
          - { id: done, type: success }
`;
}

interface Page {
  list: { data: Record<string, unknown> }[];
  next?: string;
}

async function withGateway(yaml: string, fn: (base: string) => Promise<void>): Promise<void> {
  const h = await startTestHost(yaml);
  const gw = await createGateway({ settings: h.settings, service: h.host, log: silentLogger() });
  const { port } = await gw.listen(0, '127.0.0.1');
  try {
    await fn(`http://127.0.0.1:${port}`);
  } finally {
    await gw.close();
    await h.close();
  }
}

function post(base: string, body: string): Promise<Response> {
  return fetch(`${base}/api/request/todos`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
}

async function problem(res: Response, status: number, code: string): Promise<void> {
  const text = await res.text();
  assert.equal(res.status, status, text);
  assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
  assert.equal((JSON.parse(text) as { code: string }).code, code);
}

async function pages(base: string): Promise<Page[]> {
  const out: Page[] = [];
  let next: string | undefined;
  do {
    const res = await fetch(`${base}/api/request/todos${next ? `?previous=${encodeURIComponent(next)}` : ''}`);
    assert.equal(res.status, 200);
    const page = (await res.json()) as Page;
    out.push(page);
    next = page.next;
    assert.ok(out.length < 100, 'paging ends');
  } while (next !== undefined);
  return out;
}

const STATES = [
  ['memory', '{ type: memory }'],
  ['sqlite', '{ type: sqlite, file: ":memory:" }'],
] as const;

test('a 1 MB body of 330,000 empty arrays is 413 TOO_MANY_VALUES and stores nothing', async () => {
  // the state would take it (its own limit raised): the gateway refuses it before parsing
  await withGateway(config('{ type: sqlite, file: ":memory:", maxValues: 1000000 }'), async (base) => {
    const body = `{"title":"x","a":[${Array(330_000).fill('[]').join(',')}]}`;
    assert.ok(body.length < 1024 * 1024, 'under bodyLimit');
    await problem(await post(base, body), 413, 'TOO_MANY_VALUES');
    const [page] = await pages(base);
    assert.deepEqual(page!.list, []);
  });
});

test('gateway.limits.maxValues counts every JSON value: at the limit 201, one more 413', async () => {
  await withGateway(config('{ type: memory }', 'limits: { maxValues: 100 }'), async (base) => {
    // the root, `title`, `a` and k elements: 3 + k values
    const body = (k: number) => `{"title":"x","a":[${Array.from({ length: k }, (_, i) => i).join(',')}]}`;
    assert.equal((await post(base, body(97))).status, 201);
    await problem(await post(base, body(98)), 413, 'TOO_MANY_VALUES');
    // empty containers count as values too: the root, `a` and 98 or 99 empty arrays
    assert.equal((await post(base, `{"a":[${Array(98).fill('[]').join(',')}]}`)).status, 201);
    await problem(await post(base, `{"a":[${Array(99).fill('[]').join(',')}]}`), 413, 'TOO_MANY_VALUES');
  });
});

test('numbers out of range are 400 INVALID_JSON, never stored as null', async () => {
  await withGateway(config('{ type: memory }'), async (base) => {
    for (const body of ['{"n":1e999999}', '{"n":-1e400}', '{"a":[1,[2,1e309]]}', `{"n":${'9'.repeat(400)}}`]) {
      await problem(await post(base, body), 400, 'INVALID_JSON');
    }
    // the largest finite double and a number that underflows to 0 are numbers
    const ok = await post(base, '{"big":1.7976931348623157e308,"tiny":1e-999}');
    assert.equal(ok.status, 201);
    assert.deepEqual(((await ok.json()) as { data: unknown }).data, { big: 1.7976931348623157e308, tiny: 0 });
    assert.equal((await pages(base))[0]!.list.length, 1);
  });
});

test('lone surrogates are 400 INVALID_JSON, in values and in keys; a pair is text', async () => {
  await withGateway(config('{ type: memory }'), async (base) => {
    for (const body of [
      '{"t":"\\ud800"}',
      '{"t":"a\\udc00b"}',
      '{"t":["ok","\\uDBFF"]}',
      '{"\\ud800":1}',
      '{"t":"\\ude00\\ud83d"}',
    ]) {
      await problem(await post(base, body), 400, 'INVALID_JSON');
    }
    const ok = await post(base, '{"t":"\\ud83d\\ude00 \\u00e9"}');
    assert.equal(ok.status, 201);
    assert.equal(((await ok.json()) as { data: { t: string } }).data.t, '\u{1F600} é');
    assert.equal((await pages(base))[0]!.list.length, 1);
  });
});

for (const [name, state] of STATES) {
  test(`${name}: a record over states.<alias>.maxValues is 413 TOO_MANY_VALUES`, async () => {
    await withGateway(config(state.replace('}', ', maxValues: 50 }')), async (base) => {
      const values = (k: number) => `{"a":[${Array(k).fill('1').join(',')}]}`; // 2 + k values
      assert.equal((await post(base, values(48))).status, 201);
      await problem(await post(base, values(49)), 413, 'TOO_MANY_VALUES');
      assert.equal((await pages(base))[0]!.list.length, 1);
    });
  });

  test(`${name}: a list page stops at states.<alias>.maxValues values, with next; every record once`, async () => {
    await withGateway(config(state.replace('}', ', maxValues: 50 }')), async (base) => {
      // 20 values each: the record's root, `n`, `a` and 17 elements
      for (let n = 0; n < 7; n++) {
        assert.equal((await post(base, `{"n":${n},"a":[${Array(17).fill('0').join(',')}]}`)).status, 201);
      }
      const all = await pages(base);
      assert.deepEqual(
        all.map((p) => p.list.length),
        [2, 2, 2, 1],
      );
      assert.deepEqual(
        all.flatMap((p) => p.list.map((r) => r.data['n'])),
        [0, 1, 2, 3, 4, 5, 6],
      );
    });
  });
}
