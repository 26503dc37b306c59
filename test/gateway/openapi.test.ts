import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { loadConfig } from '../../src/config/load.js';
import type { Settings } from '../../src/config/settings.js';
import { silentLogger } from '../../src/core/logger.js';
import { createGateway, type Gateway } from '../../src/gateway/server.js';
import { ok, ScriptedService } from './harness.js';

/** GET /api/openapi.json (issue 14 part 5, docs/gateway.md): valid OpenAPI 3.1, both forms, no secret. */

const CANARY = 'zq7Canary';
const dir = mkdtempSync(join(tmpdir(), 'sagaway-openapi-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A configuration with the canary in every place a secret or an injected value can be. */
const CONFIG = `
gateway:
  auth:
    jwt: { secret: "${CANARY}-jwt-secret-of-enough-length", issuer: "https://auth.test" }
    apiKeys:
      - { name: ci, sha256: "${createHash('sha256').update(CANARY).digest('hex')}", roles: [admin] }
  apis:
    - { path: /todos, runner: todo, methods: [GET, POST, DELETE], roles: [user] }
    - { path: /feed, runner: todo, public: true }
    - { path: /admin, runner: todo, roles: [admin] }
  stream: { cursorKey: "${CANARY}-cursor-key-0123456789" }
systems:
  bus: { type: nats, servers: ["nats://127.0.0.1:4222"], user: u, pass: "${CANARY}-nats-pass" }
  pricing: { type: http, baseUrl: "https://${CANARY}.internal.example", headers: { authorization: "Bearer ${CANARY}-h" } }
states:
  todos: { type: memory }
  orders: { type: postgres, url: "postgres://u:\${env:CANARY_DB_PASS}@db.internal/app", table: orders }
values: { PRICE_KEY: "${CANARY}-value" }
secrets: { from: file, file: ./secrets.json }
runners:
  todo:
    handlers: [read, write, rest]
    sagas:
      - id: list-todos
        path: /todos
        description: "lists todos with \${env:CANARY_ENV}"
        steps:
          - { id: start, type: start, links: [{ to: load }] }
          - id: load
            type: event
            description: "${CANARY} step"
            eventMeta:
              handler: rest
              action: CallRest
              version: 0
              domain: pricing
              inject: true
              parameters: { path: "/p/#{{API_TOKEN}}/\${{PRICE_KEY}}", headers: { x-k: "${CANARY}-param" } }
            links: [{ to: done, when: [SUCCESS] }, { to: failed, when: ["*"] }]
          - { id: done, type: success }
          - { id: failed, type: fail, error: { code: TODOS_UNAVAILABLE, http: 503, message: "${CANARY} message" } }
      - id: create-todo
        path: /todos
        methods: [POST]
        steps:
          - { id: start, type: start, links: [{ to: done }] }
          - { id: done, type: success, http: 201 }
      - id: todo
        path: /todos/:id
        methods: [GET, PUT]
        steps:
          - { id: start, type: start, links: [{ to: done }] }
          - { id: done, type: success }
      - id: remove-todo
        path: /todos/:todoId
        methods: [DELETE]
        steps:
          - { id: start, type: start, links: [{ to: done }] }
          - { id: done, type: success }
      - id: feed
        path: /feed
        steps:
          - { id: start, type: start, links: [{ to: done }] }
          - { id: done, type: success }
      - id: admin-only
        path: /feed/private
        roles: [admin]
        steps:
          - { id: start, type: start, links: [{ to: done }] }
          - { id: done, type: success }
      - id: stats
        path: /admin/stats
        steps:
          - { id: start, type: start, links: [{ to: done }] }
          - { id: done, type: success }
`;

async function loaded(text = CONFIG): Promise<Settings> {
  const file = join(dir, `sagaway-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, text);
  writeFileSync(join(dir, 'secrets.json'), JSON.stringify({ API_TOKEN: `${CANARY}-secret` }));
  const env = { ...process.env, CANARY_ENV: `${CANARY}-env`, CANARY_DB_PASS: `${CANARY}-db` };
  return (await loadConfig(file, { env })).settings;
}

async function withGateway(settings: Settings, fn: (gw: Gateway) => Promise<void>): Promise<void> {
  const gw = await createGateway({ settings, service: new ScriptedService(() => ok({})), log: silentLogger() });
  try {
    await fn(gw);
  } finally {
    await gw.close();
  }
}

type Doc = {
  openapi: string;
  info: { version: string };
  paths: Record<string, Record<string, Record<string, unknown>>>;
  components: { securitySchemes: Record<string, Record<string, unknown>> };
};

test('the document is valid OpenAPI 3.1 (a real validator) with both forms of every served saga', async () => {
  await withGateway(await loaded(), async (gw) => {
    const res = await gw.app.inject({ method: 'GET', url: '/api/openapi.json' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    const doc = JSON.parse(res.body) as Doc;
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 1));
    assert.equal(validator.version, '3.1');
    assert.equal(doc.openapi, '3.1.0');

    assert.deepEqual(Object.keys(doc.paths).sort(), [
      '/api/request/admin/stats',
      '/api/request/feed',
      '/api/request/feed/private',
      '/api/request/todos',
      '/api/request/todos/{id}',
      '/api/stream/admin/stats',
      '/api/stream/feed',
      '/api/stream/feed/private',
      '/api/stream/todos',
      '/api/stream/todos/{id}',
    ]);
    // methods: the saga's, within the API's (PUT is not among /todos' methods); /todos/:todoId
    // (DELETE) shares the template of /todos/:id, as OpenAPI wants
    assert.deepEqual(Object.keys(doc.paths['/api/request/todos/{id}']!).sort(), ['delete', 'get']);
    assert.deepEqual(Object.keys(doc.paths['/api/request/todos']!).sort(), ['get', 'post']);
    const get = doc.paths['/api/request/todos/{id}']!['get'] as { parameters: Record<string, unknown>[] };
    assert.deepEqual(get.parameters[0], { name: 'id', in: 'path', required: true, schema: { type: 'string' } });
    const del = doc.paths['/api/request/todos/{id}']!['delete'] as {
      operationId: string;
      parameters: { name: string }[];
    };
    assert.equal(del.operationId, 'request.todo.remove-todo.delete');
    assert.equal(del.parameters[0]!.name, 'id');
    // the stream form is text/event-stream; the one-shot form has the formats
    const stream = doc.paths['/api/stream/feed']!['get'] as { responses: Record<string, { content?: object }> };
    assert.deepEqual(Object.keys(stream.responses['200']!.content!), ['text/event-stream']);
    const request = doc.paths['/api/request/feed']!['get'] as { responses: Record<string, { content?: object }> };
    assert.ok(Object.keys(request.responses['200']!.content!).includes('text/csv'));
    // a success step's status, a fail step's status and code, errors as problem+json
    const post = doc.paths['/api/request/todos']!['post'] as {
      responses: Record<string, unknown>;
      requestBody: unknown;
      parameters: { $ref?: string }[];
    };
    assert.ok(post.responses['201']);
    assert.ok(post.requestBody);
    assert.ok(post.parameters.some((p) => p.$ref === '#/components/parameters/IdempotencyKey'));
    const list = doc.paths['/api/request/todos']!['get'] as { responses: Record<string, { description: string }> };
    assert.match(list.responses['503']!.description, /TODOS_UNAVAILABLE/);
    assert.deepEqual(list.responses['default'], { $ref: '#/components/responses/Problem' });
  });
});

test('auth: the configured schemes, roles per API, public APIs without security', async () => {
  await withGateway(await loaded(), async (gw) => {
    const doc = JSON.parse((await gw.app.inject({ method: 'GET', url: '/api/openapi.json' })).body) as Doc;
    assert.deepEqual(Object.keys(doc.components.securitySchemes).sort(), ['apiKey', 'bearer', 'cookie']);
    assert.deepEqual(doc.components.securitySchemes['bearer'], { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    assert.equal(doc.components.securitySchemes['apiKey']!['name'], 'X-API-Key');
    const op = (path: string) => doc.paths[path]!['get'] as { security: Record<string, string[]>[]; responses: object };
    assert.deepEqual(op('/api/request/todos').security, [
      { bearer: ['user'] },
      { cookie: ['user'] },
      { apiKey: ['user'] },
    ]);
    assert.ok('401' in op('/api/request/todos').responses);
    assert.deepEqual(op('/api/request/feed').security, [], 'a public API needs nothing');
    assert.ok(!('401' in op('/api/request/feed').responses));
    // a public API whose saga needs a role still needs a credential
    assert.deepEqual(op('/api/stream/feed/private').security[0], { bearer: ['admin'] });
    assert.deepEqual((doc.paths['/api/request/feed/private']!['get'] as Record<string, unknown>)['x-sagaway-roles'], {
      api: [],
      saga: ['admin'],
    });
  });
});

test('canary: no secret, credential, injected value, connection URL or free text reaches the document', async () => {
  await withGateway(await loaded(), async (gw) => {
    const text = (await gw.app.inject({ method: 'GET', url: '/api/openapi.json' })).body;
    assert.ok(text.length > 1000);
    assert.equal(text.toLowerCase().includes(CANARY.toLowerCase()), false);
    const hash = createHash('sha256').update(CANARY).digest('hex');
    assert.equal(text.includes(hash), false);
    for (const word of ['internal', 'postgres:', 'nats:', 'PRICE_KEY', 'API_TOKEN'])
      assert.equal(text.includes(word), false, word);
  });
});

test('built once: the same bytes and ETag every time, 304 on If-None-Match; gateway.openapi false turns it off', async () => {
  const settings = await loaded();
  await withGateway(settings, async (gw) => {
    const a = await gw.app.inject({ method: 'GET', url: '/api/openapi.json' });
    const b = await gw.app.inject({ method: 'GET', url: '/api/openapi.json' });
    assert.equal(a.body, b.body);
    assert.ok(a.headers['etag']);
    const cached = await gw.app.inject({
      method: 'GET',
      url: '/api/openapi.json',
      headers: { 'if-none-match': String(a.headers['etag']) },
    });
    assert.equal(cached.statusCode, 304);
    assert.equal(cached.body, '');
  });
  const off = { ...settings, gateway: { ...settings.gateway, openapi: false as const } };
  await withGateway(off, async (gw) => {
    const res = await gw.app.inject({ method: 'GET', url: '/api/openapi.json' });
    assert.equal(res.statusCode, 404);
    assert.match(String(res.headers['content-type']), /problem\+json/);
  });
});

test('a configuration without APIs gives a valid, empty document', async () => {
  await withGateway(await loaded('runners: { r: { sagas: [] } }\n'), async (gw) => {
    const doc = JSON.parse((await gw.app.inject({ method: 'GET', url: '/api/openapi.json' })).body) as Doc;
    assert.deepEqual(doc.paths, {});
    assert.equal((await new Validator().validate(structuredClone(doc))).valid, true);
  });
});
