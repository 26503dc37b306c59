import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, test } from 'node:test';
import { loadTestHost } from '../../src/testing/index.js';

/**
 * Issue 24 item 6: a handler written in TypeScript, as docs/handler-api.md ("Handlers in
 * TypeScript") says: typed with the package's own types, compiled by tsc, loaded by a runner. A
 * `.ts` module named directly loads where Node strips types (22.18+), and on an older Node fails
 * with a message that says what to do.
 */

const dir = mkdtempSync(join(tmpdir(), 'sagaway-ts-handler-'));
after(() => rmSync(dir, { recursive: true, force: true }));

// The project as the recipe makes it: sagaway as a dependency (here: this checkout), a tsconfig.
mkdirSync(join(dir, 'node_modules'));
symlinkSync(resolve('.'), join(dir, 'node_modules', 'sagaway'), 'dir');
mkdirSync(join(dir, 'handlers'));
writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
const SOURCE = `import { defineHandler, type ActionContext } from 'sagaway';

interface Vote {
  voter: string;
  choice: 'tea' | 'coffee';
}

export default defineHandler({
  name: 'votes',
  actions: {
    Cast: {
      0: (input: unknown, ctx: ActionContext) => {
        const vote = input as Vote;
        if (vote.choice !== 'tea' && vote.choice !== 'coffee') ctx.fail('BAD_CHOICE', 'tea or coffee', 400);
        return { voter: vote.voter, choice: vote.choice, by: ctx.user?.sub ?? null };
      },
    },
  },
});
`;
writeFileSync(join(dir, 'handlers', 'votes.ts'), SOURCE);
writeFileSync(
  join(dir, 'tsconfig.json'),
  JSON.stringify({
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      outDir: 'dist',
      rootDir: '.',
      skipLibCheck: true,
      types: [],
    },
    include: ['handlers'],
  }),
);

const config = (handler: string) => `
runners:
  app:
    handlers: [${handler}]
    sagas:
      - id: vote
        path: /votes
        methods: [POST]
        steps:
          - { id: start, type: start, links: [{ to: cast }] }
          - { id: cast, type: event, eventMeta: { handler: votes, action: Cast, version: 0, inputElement: parameters, outputElement: $.vote }, links: [{ to: done }] }
          - { id: done, type: success, outputElement: vote }
`;

async function castWith(handler: string) {
  writeFileSync(join(dir, 'sagaway.yaml'), config(handler));
  const h = await loadTestHost(join(dir, 'sagaway.yaml'));
  try {
    return await h.run('/votes', {
      method: 'POST',
      input: { voter: 'grace', choice: 'tea' },
      user: { sub: 'grace', roles: [], claims: {}, anonymous: false },
    });
  } finally {
    await h.close();
  }
}

test('compiled with tsc: the types check, and the runner loads the .js and runs it', async () => {
  const tsc = spawnSync(process.execPath, [resolve('node_modules', 'typescript', 'bin', 'tsc'), '-p', dir], {
    encoding: 'utf8',
  });
  assert.equal(tsc.status, 0, tsc.stdout + tsc.stderr);
  const result = await castWith('./dist/handlers/votes.js');
  assert.equal(result.outcome, 'SUCCESS', JSON.stringify(result));
  assert.deepEqual(result.response, { voter: 'grace', choice: 'tea', by: 'grace' });
});

test("a type error in the handler is tsc's error, before anything runs", () => {
  const bad = join(dir, 'bad');
  mkdirSync(join(bad, 'handlers'), { recursive: true });
  writeFileSync(
    join(bad, 'handlers', 'votes.ts'),
    SOURCE.replace("ctx.fail('BAD_CHOICE', 'tea or coffee', 400)", 'ctx.fail(400)'),
  );
  writeFileSync(join(bad, 'tsconfig.json'), JSON.stringify({ extends: '../tsconfig.json', include: ['handlers'] }));
  symlinkSync(join(dir, 'node_modules'), join(bad, 'node_modules'), 'dir');
  const tsc = spawnSync(
    process.execPath,
    [resolve('node_modules', 'typescript', 'bin', 'tsc'), '-p', bad, '--noEmit'],
    {
      encoding: 'utf8',
    },
  );
  assert.notEqual(tsc.status, 0);
  assert.match(tsc.stdout, /handlers\/votes\.ts\(\d+,\d+\): error TS\d+/);
});

test('the .ts file named directly: loaded where Node strips types, else a message that says what to do', async () => {
  const strips = (process.features as { typescript?: unknown }).typescript;
  if (strips) {
    const result = await castWith('./handlers/votes.ts');
    assert.equal(result.outcome, 'SUCCESS', JSON.stringify(result));
    return;
  }
  await assert.rejects(castWith('./handlers/votes.ts'), (e: Error) => {
    assert.match(e.message, /Unknown file extension "\.ts"/);
    assert.match(
      e.message,
      /cannot load TypeScript: compile the handler with tsc and name the \.js file, or use Node 22\.18 or later/,
    );
    return true;
  });
});
