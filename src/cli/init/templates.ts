/**
 * The files of a new project (`sagaway init`). docs/first-saga.md walks through them; the test
 * of that guide installs a project made from them and runs its test, so they cannot rot.
 */

/** What the templates need to know. */
export interface ProjectInfo {
  /** npm package name of the project */
  name: string;
  /** the dependency spec of sagaway: `file:/abs/sagaway-0.1.0.tgz`, `file:/abs/checkout`, `^0.1.0` */
  sagaway: string;
}

const CONFIG = `# The configuration of this project: what the gateway serves, where data lives, which runner
# runs which sagas. \`npx sagaway validate\` checks it; \`npx sagaway routes\` shows what is served.
# yaml-language-server: $schema=node_modules/sagaway/schema/sagaway.schema.json
gateway:
  port: 8080
  # host: 0.0.0.0       # default 127.0.0.1 (this machine only); a container needs 0.0.0.0
  apis:                 # nothing is served without an entry here; public: true = no auth
    - { path: /hello, runner: app, methods: [GET], public: true }
    - { path: /notes, runner: app, methods: [GET, POST], public: true }

states:
  notes: { type: sqlite, file: "\${env:NOTES_DB:-./data/notes.db}" }

runners:
  app:
    handlers: [read, write, ./handlers/greeter.mjs]    # built-in handlers, and yours
    sagas: [./sagas/*.yaml]
`;

const HANDLER = `import { defineHandler } from 'sagaway';

// A handler is a name and its actions; each action has numbered versions (0 = unversioned).
// An action gets the input (the part of the payload the step's inputElement names) and a
// context (docs/handler-api.md in the sagaway package); what it returns is its output.
export default defineHandler({
  name: 'greeter',
  actions: {
    Greet: {
      0: async (input, ctx) => {
        const name = typeof input.name === 'string' ? input.name.trim() : '';
        if (name === '') ctx.fail('VALIDATION_FAILED', 'name must not be empty', 400);
        return { message: \`Hello, \${name}!\` };
      },
    },
  },
});
`;

const HELLO = `# GET /api/request/hello/Ada -> {"message":"Hello, Ada!"}
id: hello
path: /hello/:name            # :name becomes parameters.name
methods: [GET]
steps:
  - { id: start, type: start, links: [{ to: greet }] }
  - id: greet
    type: event
    eventMeta:
      handler: greeter
      action: Greet
      version: 0
      inputElement: parameters          # the action's input: { name }
      outputElement: $.greeting         # where its output goes in the payload
    links: [{ to: done, when: [SUCCESS] }, { to: failed, when: ["*"] }]
  - { id: done, type: success, outputElement: greeting }   # the response is the greeting
  - { id: failed, type: fail }                             # the action's error, e.g. 400
`;

const NOTES = `# Notes in the SQLite state "notes": create one, list them, and a live feed.
- id: create-note
  path: /notes
  methods: [POST]
  # JSON Schema of the body, checked by the gateway before any step runs: a missing or empty
  # text is 400 INVALID_INPUT with a pointer (/text). Also in /api/openapi.json, with the example.
  inputSchema:
    type: object
    required: [text]
    properties:
      text: { type: string, minLength: 1, maxLength: 2000 }
    examples: [{ text: buy milk }]
  steps:
    - { id: start, type: start, links: [{ to: create }] }
    - id: create
      type: event
      eventMeta: { handler: write, action: Create, version: 0, domain: notes, inputElement: parameters, outputElement: $.note }
      links: [{ to: done, when: [SUCCESS] }, { to: failed, when: ["*"] }]
    - { id: done, type: success, http: 201, outputElement: note }
    - { id: failed, type: fail }

# /api/request/notes answers { list: [...] }; /api/stream/notes sends one event per note, then \`end\`.
- id: list-notes
  path: /notes
  methods: [GET]
  autoFail: true
  steps:
    - { id: start, type: start, links: [{ to: load }] }
    - id: load
      type: event
      eventMeta: { handler: read, action: GetList, version: 0, domain: notes, inputElement: parameters, outputElement: $, parameters: { limit: 100 } }
      links: [{ to: done }]
    - { id: done, type: success }

# /api/stream/notes/feed: every note once, then new ones as they are created (it never ends).
- id: notes-feed
  path: /notes/feed
  methods: [GET]
  autoFail: true
  steps:
    - { id: start, type: start, links: [{ to: page }] }
    - id: page
      type: event
      eventMeta: { handler: read, action: GetList, version: 0, domain: notes, inputElement: parameters, outputElement: $.page, parameters: { limit: 20, follow: true } }
      links: [{ to: shape }]
    - id: shape
      type: transform
      expression: '{ "list": page.list, "next": page.next, "continue": true, "wait": "1s" }'
      links: [{ to: done }]
    - { id: done, type: success }
`;

const TEST = `import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { loadTestHost } from 'sagaway';

// The project's own sagaway.yaml, run in process (no HTTP), with the notes in memory.
const app = await loadTestHost(new URL('../sagaway.yaml', import.meta.url), {
  env: { ...process.env, NOTES_DB: ':memory:' },
});
after(() => app.close());

test('hello greets by name', async () => {
  const r = await app.run('/hello/Ada');
  assert.equal(r.outcome, 'SUCCESS');
  assert.deepEqual(r.response, { message: 'Hello, Ada!' });
});

test('a blank name fails with the handler\\'s 400', async () => {
  const r = await app.run('/hello/ ');
  assert.equal(r.outcome, 'FAIL');
  assert.equal(r.http, 400);
  assert.equal(r.error?.code, 'VALIDATION_FAILED');
});

test('a note is created, then listed', async () => {
  const created = await app.run('/notes', { method: 'POST', input: { text: 'buy milk' } });
  assert.equal(created.http, 201);
  const list = await app.run('/notes');
  assert.deepEqual(
    list.response.list.map((n) => n.data.text),
    ['buy milk'],
  );
});

test('an empty note is refused by the input schema', async () => {
  const r = await app.run('/notes', { method: 'POST', input: { text: '' } });
  assert.equal(r.http, 400);
  assert.equal(r.error?.code, 'INVALID_INPUT');
});
`;

const GITIGNORE = `node_modules/
data/
`;

function readme(p: ProjectInfo): string {
  return `# ${p.name}

A sagaway project, made by \`sagaway init\`: an API gateway whose every path is a saga.

\`\`\`sh
npm install
npm start          # http://127.0.0.1:8080 (PORT=9000 npm start for another port)
npm test           # validates sagaway.yaml, then runs test/*.test.mjs
npx sagaway routes # what the gateway serves
\`\`\`

\`\`\`sh
curl -s localhost:8080/api/request/hello/Ada
curl -s localhost:8080/api/request/notes -H 'content-type: application/json' -d '{"text":"buy milk"}'
curl -s localhost:8080/api/request/notes
curl -N localhost:8080/api/stream/notes          # one event per note, then event: end
curl -N localhost:8080/api/stream/notes/feed     # every note, then new ones as they come (Ctrl-C)
\`\`\`

| file | what it is |
|---|---|
| \`sagaway.yaml\` | the gateway's APIs, the state, the runner |
| \`handlers/greeter.mjs\` | your handler: the action \`Greet\` |
| \`sagas/hello.yaml\` | a saga calling it |
| \`sagas/notes.yaml\` | create (its input checked by a JSON Schema) and list notes, and a live feed (built-in \`read\` and \`write\`) |
| \`test/app.test.mjs\` | runs the sagas in process with sagaway's test kit |

Data is kept in \`data/notes.db\` (ignored by git).

## npm and install scripts

npm 11.16 and later list, after \`npm install\`, the dependencies whose install scripts nobody
has reviewed (\`npm warn install-scripts …\`), and a later npm will not run them. This
project's \`package.json\` answers for the two it has, in \`allowScripts\`: \`better-sqlite3\`
may run its install script (it fetches or builds the SQLite addon that the \`sqlite\` state uses
on Node 20), and sagaway's own \`prepare\` is not needed (it builds sagaway from a source
checkout; the package you install is built). Older npm ignores the field.
\`npm install-scripts ls\` shows what is covered; a dependency you add with an install script
shows up there until you approve or deny it.
`;
}

function packageJson(p: ProjectInfo): string {
  const pkg = {
    name: p.name,
    version: '0.1.0',
    private: true,
    type: 'module',
    scripts: {
      start: 'sagaway start',
      test: 'sagaway validate && node --test',
      validate: 'sagaway validate',
      routes: 'sagaway routes',
    },
    dependencies: { sagaway: p.sagaway },
    engines: { node: '>=20.18.1' },
    // npm 11.16+ lists install scripts nobody reviewed (a later npm blocks them): the SQLite
    // addon's is needed; sagaway's own `prepare` only builds a source checkout (README.md).
    allowScripts: { 'better-sqlite3': true, sagaway: false },
  };
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

/** The files of a new project, by path relative to its folder. */
export function projectFiles(p: ProjectInfo): Record<string, string> {
  return {
    'package.json': packageJson(p),
    'sagaway.yaml': CONFIG,
    'handlers/greeter.mjs': HANDLER,
    'sagas/hello.yaml': HELLO,
    'sagas/notes.yaml': NOTES,
    'test/app.test.mjs': TEST,
    '.gitignore': GITIGNORE,
    'README.md': readme(p),
  };
}
