import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, test } from 'node:test';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { loadConfig } from '../../src/config/load.js';
import type { Settings } from '../../src/config/settings.js';
import { silentLogger } from '../../src/core/logger.js';
import { createGateway } from '../../src/gateway/server.js';
import { ok, ScriptedService } from './harness.js';

/**
 * The OpenAPI document of typed sagas (issue 28): tools no one here wrote accept it as it is.
 * Redocly's recommended ruleset finds 0 problems; openapi-typescript turns it into types whose
 * request body and query have the schemas' fields (checked by compiling code against them).
 */

const dir = mkdtempSync(join(tmpdir(), 'sagaway-openapi-typed-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const steps = `
        steps:
          - { id: start, type: start, links: [{ to: done }] }
          - { id: done, type: success }`;

const CONFIG = `
gateway:
  port: 9123
  auth:
    apiKeys:
      - { name: ci, sha256: "${createHash('sha256').update('k').digest('hex')}", roles: [admin] }
  apis:
    - { path: /todos, runner: todo, public: true }
    - { path: /admin, runner: todo, roles: [admin] }
runners:
  todo:
    sagas:
      - id: create-todo
        path: /todos
        methods: [POST]
        inputSchema: { $ref: ./schemas/new-todo.yaml }
        outputSchema: { $ref: ./schemas/todo.yaml }
        steps:
          - { id: start, type: start, links: [{ to: done }] }
          - { id: done, type: success, http: 201 }
      - id: list-todos
        path: /todos
        inputSchema:
          type: object
          properties:
            limit: { type: integer, minimum: 1, maximum: 100, description: page size }
            tag: { $ref: "#/$defs/tag" }
          $defs:
            tag: { type: string, maxLength: 20 }
        outputSchema:
          type: object
          required: [list]
          properties:
            list: { type: array, items: { $ref: "#/$defs/todo" } }
          $defs:
            todo: { type: object, properties: { id: { type: string } } }
${steps}
      - id: stats
        path: /admin/stats
        methods: [GET, DELETE]
${steps}
`;

async function documentOf(config: string, files: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const sub = mkdtempSync(join(dir, 'c-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(sub, name, '..'), { recursive: true });
    writeFileSync(join(sub, name), text);
  }
  writeFileSync(join(sub, 'sagaway.yaml'), config);
  const settings: Settings = (await loadConfig(join(sub, 'sagaway.yaml'))).settings;
  const gw = await createGateway({ settings, service: new ScriptedService(() => ok({})), log: silentLogger() });
  try {
    const res = await gw.app.inject({ method: 'GET', url: '/api/openapi.json' });
    assert.equal(res.statusCode, 200);
    return res.json<Record<string, unknown>>();
  } finally {
    await gw.close();
  }
}

const FILES = {
  'package.json': JSON.stringify({ name: 'todo-api', license: 'MIT' }),
  'schemas/new-todo.yaml': `
$schema: https://json-schema.org/draft/2020-12/schema
type: object
required: [title]
properties:
  title: { type: string, minLength: 1 }
  done: { type: boolean }
additionalProperties: false
examples: [{ title: buy milk }]
`,
  'schemas/todo.yaml': `
type: object
required: [id, title]
properties: { id: { type: string }, title: { type: string } }
examples: [{ id: "1", title: buy milk }]
`,
};

/** Redocly's recommended ruleset over a document: its totals, and the problems for the message. */
function redocly(doc: unknown): { totals: { errors: number; warnings: number }; problems: unknown[] } {
  const file = join(dir, `doc-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(doc));
  const r = spawnSync(
    process.execPath,
    [resolve('node_modules/@redocly/cli/bin/cli.js'), 'lint', file, '--extends', 'recommended', '--format', 'json'],
    {
      encoding: 'utf8',
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
    },
  );
  const start = r.stdout.indexOf('{');
  assert.ok(start >= 0, `redocly printed no report: ${r.stderr}`);
  return JSON.parse(r.stdout.slice(start)) as ReturnType<typeof redocly>;
}

test("Redocly's recommended ruleset: 0 errors and 0 warnings, typed or not, with or without APIs", async () => {
  const typed = await documentOf(CONFIG, FILES);
  const report = redocly(typed);
  assert.deepEqual(
    [report.totals.errors, report.totals.warnings],
    [0, 0],
    JSON.stringify(report.problems, null, 1).slice(0, 3000),
  );
  assert.deepEqual(typed['servers'], [
    {
      url: 'http://127.0.0.1:9123',
      description: 'this gateway (gateway.host and its port); gateway.openapi.servers names public ones',
    },
  ]);
  assert.deepEqual((typed['info'] as { license: unknown }).license, { name: 'MIT', identifier: 'MIT' });
  const empty = await documentOf(
    'gateway: { openapi: { servers: [{ url: "https://api.test.dev" }], license: Apache-2.0 } }\nrunners: { r: { sagas: [] } }\n',
  );
  assert.deepEqual(empty['servers'], [{ url: 'https://api.test.dev' }]);
  assert.deepEqual(empty['components'], {}, 'no paths, so no component is used');
  const emptyReport = redocly(empty);
  assert.deepEqual(
    [emptyReport.totals.errors, emptyReport.totals.warnings],
    [0, 0],
    JSON.stringify(emptyReport.problems),
  );
});

test('per-saga schemas: components with their examples, typed query parameters, 4xx and 5xx everywhere', async () => {
  const doc = (await documentOf(CONFIG, FILES)) as {
    paths: Record<string, Record<string, Record<string, unknown>>>;
    components: { schemas: Record<string, Record<string, unknown>> };
  };
  const schemas = doc.components.schemas;
  assert.deepEqual(Object.keys(schemas).sort(), [
    'InvalidInput',
    'Problem',
    'todo.create-todo.input',
    'todo.create-todo.output',
    'todo.list-todos.output',
  ]);
  assert.deepEqual(schemas['todo.create-todo.input']!['examples'], [{ title: 'buy milk' }]);
  assert.equal(schemas['todo.create-todo.input']!['$schema'], undefined);
  const post = doc.paths['/api/request/todos']!['post']!;
  const body = post['requestBody'] as { required: boolean; content: Record<string, Record<string, unknown>> };
  assert.equal(body.required, true);
  assert.deepEqual(body.content['application/json'], {
    schema: { $ref: '#/components/schemas/todo.create-todo.input' },
    example: { title: 'buy milk' },
  });
  const created = (post['responses'] as Record<string, { content: Record<string, unknown> }>)['201']!;
  assert.deepEqual((created.content['application/json'] as { schema: unknown }).schema, {
    $ref: '#/components/schemas/todo.create-todo.output',
  });
  const list = doc.paths['/api/request/todos']!['get']!;
  const params = list['parameters'] as { name: string; required: boolean; schema: unknown }[];
  assert.deepEqual(
    params.map((p) => p.name),
    ['limit', 'tag'],
  );
  assert.deepEqual(params[1]!.schema, { type: 'string', maxLength: 20 }, 'a pointer into the schema is inlined');
  assert.equal(params[0]!.required, false);
  assert.deepEqual(
    (schemas['todo.list-todos.output']!['properties'] as { list: { items: unknown } }).list.items,
    { $ref: '#/components/schemas/todo.list-todos.output/$defs/todo' },
    'pointers into a schema are rewritten into its component',
  );
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const statuses = Object.keys(op['responses'] as object);
      assert.ok(statuses.some((s) => /^4\d\d$/.test(s)) && statuses.includes('500'), `${method} ${path}`);
    }
  }
});

test('openapi-typescript: the request body and the query of the generated client have the schemas fields', async () => {
  const doc = await documentOf(CONFIG, FILES);
  const types = astToString(await openapiTS(doc as unknown as Parameters<typeof openapiTS>[0]));
  const sub = mkdtempSync(join(dir, 'ts-'));
  writeFileSync(join(sub, 'api.ts'), types);
  writeFileSync(
    join(sub, 'use.ts'),
    `import type { paths } from './api.js';
type Body = paths['/api/request/todos']['post']['requestBody']['content']['application/json'];
type Query = NonNullable<paths['/api/request/todos']['get']['parameters']['query']>;
type Created = paths['/api/request/todos']['post']['responses'][201]['content']['application/json'];
export const body: Body = { title: 'buy milk', done: false };
// @ts-expect-error title is a string
export const wrongType: Body = { title: 1 };
// @ts-expect-error title is required
export const missing: Body = { done: true };
export const query: Query = { limit: 10, tag: 'home' };
// @ts-expect-error limit is a number
export const badQuery: Query = { limit: 'ten' };
export const created: Created = { id: '1', title: 'x' };
`,
  );
  const program = ts.createProgram([join(sub, 'use.ts')], {
    strict: true,
    noEmit: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    skipLibCheck: true,
    types: [],
  });
  const diagnostics = ts
    .getPreEmitDiagnostics(program)
    .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  assert.deepEqual(diagnostics, []);
  assert.match(types, /title: string;/);
  assert.match(types, /done\?: boolean;/);
});
