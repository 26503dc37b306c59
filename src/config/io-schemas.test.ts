import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ConfigError } from '../core/errors.js';
import { sagaSchemas } from './io-schemas.js';
import { loadConfig } from './load.js';

const dir = mkdtempSync(join(tmpdir(), 'sagaway-io-schemas-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const write = (name: string, text: string) => {
  mkdirSync(join(dir, name, '..'), { recursive: true });
  writeFileSync(join(dir, name), text);
  return join(dir, name);
};

const steps = `
  steps:
    - { id: start, type: start, links: [{ to: done }] }
    - { id: done, type: success }`;

test('a schema $ref names a file relative to the saga file; two sagas share one read of it', async () => {
  write(
    'schemas/todo.yaml',
    'type: object\nrequired: [title]\nproperties:\n  title: { type: string, minLength: 1 }\nexamples: [{ title: buy milk }]\n',
  );
  write(
    'sagas/todos.yaml',
    `- id: create
  path: /todos
  methods: [POST, PUT]
  inputSchema: { $ref: ../schemas/todo.yaml }
  outputSchema: { $ref: ../schemas/todo.yaml }${steps}
- id: list
  path: /todos
  inputSchema: { type: object, properties: { limit: { type: integer } } }${steps}
`,
  );
  const file = write('sagaway.yaml', 'runners:\n  r:\n    sagas: [./sagas/*.yaml]\n');
  const { settings } = await loadConfig(file);
  const [create, list] = settings.runners['r']!.sagas;
  assert.deepEqual(create!.inputSchema, {
    type: 'object',
    required: ['title'],
    properties: { title: { type: 'string', minLength: 1 } },
    examples: [{ title: 'buy milk' }],
  });
  assert.equal(create!.inputSchema, create!.outputSchema, 'one file, one read');
  const schemas = sagaSchemas(create!);
  assert.equal(schemas.query, undefined, 'POST and PUT read a body: no query check');
  assert.equal(schemas.body!({ title: 'x' }), true);
  assert.equal(schemas.body!({ title: '' }), false);
  assert.equal(schemas.output!({}), false);
  // the query check coerces strings; the body check never does
  const query: Record<string, unknown> = { limit: '5' };
  assert.equal(sagaSchemas(list!).query!(query), true);
  assert.deepEqual(query, { limit: 5 });
  assert.equal(sagaSchemas(list!).body, undefined);
});

test('a missing schema file, a URL and a non-schema file are located errors', async () => {
  write('not-schema.json', '{ "type": 12 }');
  const file = write(
    'bad-refs.yaml',
    `runners:
  r:
    sagas:
      - id: a
        path: /a
        inputSchema: { $ref: ./nope.json }${steps.replace(/\n {2}/g, '\n        ')}
      - id: b
        path: /b
        inputSchema: { $ref: "https://example.com/s.json" }${steps.replace(/\n {2}/g, '\n        ')}
      - id: c
        path: /c
        outputSchema: { $ref: ./not-schema.json }${steps.replace(/\n {2}/g, '\n        ')}
`,
  );
  const err = await loadConfig(file).then(
    () => assert.fail('loaded'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof ConfigError);
  const lines = err.issues.map((i) => `${i.file.split('/').at(-1)}:${i.line} ${i.path}: ${i.message}`);
  assert.ok(
    lines.some((l) => /^nope\.json:1 : cannot read file \(ENOENT\)$/.test(l)),
    lines.join('\n'),
  );
  assert.ok(
    lines.includes('bad-refs.yaml:6 runners.r.sagas[0].inputSchema.$ref: the schema file ./nope.json cannot be used'),
  );
  assert.ok(lines.some((l) => /^bad-refs\.yaml:\d+ runners\.r\.sagas\[1\]\.inputSchema\.\$ref: .*no URL/.test(l)));
  assert.ok(
    lines.some((l) => /^not-schema\.json:1 type: outputSchema: must be /.test(l)),
    lines.join('\n'),
  );
});

test('sagas made by code are compiled on first use; a broken one throws, naming the saga', () => {
  const saga = {
    id: 'made',
    path: '/m',
    methods: ['GET'],
    inputSchema: { type: 'object', properties: { n: { type: 'nope' } } },
    steps: [],
  };
  assert.throws(() => sagaSchemas(saga), /saga "made": inputSchema \/properties\/n\/type: must be equal/);
  assert.deepEqual(sagaSchemas({ id: 'plain', path: '/p', steps: [] }), {});
});
