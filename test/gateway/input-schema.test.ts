import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { silentLogger } from '../../src/core/logger.js';
import type { SagaRequest } from '../../src/core/types.js';
import { createGateway, type Gateway } from '../../src/gateway/server.js';
import { startTestHost, type TestHost } from '../../src/testing/index.js';

/**
 * A saga's inputSchema, checked by the gateway on both forms before any step runs (issue 28):
 * 400 INVALID_INPUT with JSON pointers, the query's strings coerced to the schema's types, and
 * nothing run (the saga service is never called, the state stays empty).
 */

const CONFIG = `
gateway:
  limits: { rate: false }
  apis:
    - { path: /todos, runner: todo, public: true }
    - { path: /admin, runner: todo, public: true }
states:
  todos: { type: memory }
runners:
  todo:
    handlers: [read, write]
    sagas:
      - id: create-todo
        path: /todos
        methods: [POST]
        inputSchema:
          type: object
          required: [title]
          properties:
            title: { type: string, minLength: 1, maxLength: 200 }
            done: { type: boolean }
            tags: { type: array, items: { type: string }, maxItems: 3 }
          additionalProperties: false
        steps:
          - { id: start, type: start, links: [{ to: create }] }
          - id: create
            type: event
            autoFail: true
            eventMeta: { handler: write, action: Create, version: 0, domain: todos, inputElement: parameters, outputElement: $.todo }
            links: [{ to: done }]
          - { id: done, type: success, http: 201, outputElement: todo }
      - id: search
        path: /todos
        methods: [GET]
        inputSchema:
          type: object
          properties:
            limit: { type: integer, minimum: 1, maximum: 50 }
            full: { type: boolean }
            tag: { type: array, items: { type: string } }
        steps:
          - { id: start, type: start, links: [{ to: done }] }
          - { id: done, type: success }
      - id: admin
        path: /admin
        roles: [admin]
        inputSchema: { type: object, required: [secretField] }
        steps:
          - { id: start, type: start, links: [{ to: done }] }
          - { id: done, type: success }
`;

let h: TestHost;
let gw: Gateway;
const runs: SagaRequest[] = [];

before(async () => {
  h = await startTestHost(CONFIG);
  gw = await createGateway({
    settings: h.settings,
    service: {
      run: (runner, req) => {
        runs.push(req);
        return h.host.run(runner, req);
      },
    },
    log: silentLogger(),
  });
});
after(async () => {
  await gw.close();
  await h.close();
});

type Invalid = { status: number; code: string; detail: string; errors: { pointer: string; message: string }[] };

test('an invalid body answers 400 INVALID_INPUT with a pointer per failure, and no step ran', async () => {
  const before = runs.length;
  const res = await gw.app.inject({
    method: 'POST',
    url: '/api/request/todos',
    headers: { 'content-type': 'application/json' },
    payload: { title: '', done: 'yes', extra: 1, tags: ['a', 2] },
  });
  assert.equal(res.statusCode, 400);
  assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
  const body = res.json<Invalid>();
  assert.equal(body.code, 'INVALID_INPUT');
  assert.equal(body.status, 400);
  assert.deepEqual(body.errors.map((e) => e.pointer).sort(), ['/done', '/extra', '/tags/1', '/title']);
  assert.equal(body.errors.find((e) => e.pointer === '/extra')!.message, 'is not allowed');
  assert.match(body.errors.find((e) => e.pointer === '/title')!.message, /fewer than 1 characters/);
  const missing = await gw.app.inject({
    method: 'POST',
    url: '/api/request/todos',
    headers: { 'content-type': 'application/json' },
    payload: {},
  });
  assert.deepEqual(missing.json<Invalid>().errors, [{ pointer: '/title', message: 'is required' }]);
  assert.equal(runs.length, before, 'the saga service was never called');
});

test('a valid body runs the saga; the stream form checks its body too', async () => {
  const ok = await gw.app.inject({
    method: 'POST',
    url: '/api/request/todos',
    headers: { 'content-type': 'application/json' },
    payload: { title: 'buy milk', tags: ['x'] },
  });
  assert.equal(ok.statusCode, 201, ok.body);
  const before = runs.length;
  const streamed = await gw.app.inject({
    method: 'POST',
    url: '/api/stream/todos',
    headers: { 'content-type': 'application/json' },
    payload: { title: 7 },
  });
  assert.equal(streamed.statusCode, 400);
  assert.deepEqual(streamed.json<Invalid>().errors, [{ pointer: '/title', message: 'must be string' }]);
  assert.equal(runs.length, before);
});

test('an invalid query answers 400 on both forms; a valid one reaches the saga coerced to the types', async () => {
  const before = runs.length;
  for (const form of ['request', 'stream']) {
    const res = await gw.app.inject({ method: 'GET', url: `/api/${form}/todos?limit=500&full=maybe` });
    assert.equal(res.statusCode, 400, form);
    const body = res.json<Invalid>();
    assert.equal(body.code, 'INVALID_INPUT');
    assert.match(body.detail, /query/);
    assert.deepEqual(body.errors.map((e) => e.pointer).sort(), ['/full', '/limit']);
  }
  assert.equal(runs.length, before, 'no run for an invalid query');
  const res = await gw.app.inject({ method: 'GET', url: '/api/request/todos?limit=5&full=true&tag=a' });
  assert.equal(res.statusCode, 200, res.body);
  const seen = runs.at(-1)!;
  assert.deepEqual(seen.input, { limit: 5, full: true, tag: ['a'] });
  assert.deepEqual(seen.query, seen.input);
});

test('a caller the saga would refuse for its roles is not told about the schema', async () => {
  const res = await gw.app.inject({ method: 'GET', url: '/api/stream/admin' });
  assert.equal(res.statusCode, 401);
  assert.equal(res.json<{ code: string }>().code, 'UNAUTHORIZED');
});

test('the failures listed are bounded', async () => {
  const res = await gw.app.inject({
    method: 'POST',
    url: '/api/request/todos',
    headers: { 'content-type': 'application/json' },
    payload: { title: 'x', ...Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, i])) },
  });
  assert.equal(res.statusCode, 400);
  assert.equal(res.json<Invalid>().errors.length, 10);
});
