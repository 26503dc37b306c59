import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { HandlerEnv } from '../../handlers/api.js';
import { importHandlerModule } from './registry.js';

/**
 * A handler module that imports `sagaway` in a project where it is not installed (a fresh clone,
 * `npm install` not run): the load error says what to do (issue 19, item 6).
 */

const dir = mkdtempSync(join(tmpdir(), 'sagaway-handler-module-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('a handler that cannot load because sagaway is not installed says to run npm install', async () => {
  const file = join(dir, 'greet.mjs');
  writeFileSync(
    file,
    "import { defineHandler } from 'sagaway';\nexport default defineHandler({ name: 'greet', actions: { Hello: { 0: () => ({}) } } });\n",
  );
  await assert.rejects(importHandlerModule(file, {} as HandlerEnv), (e: Error & { code?: string }) => {
    assert.equal(e.code, 'CONFIG_INVALID');
    assert.match(e.message, /cannot load handler module .*greet\.mjs/);
    assert.match(e.message, /imports the package "sagaway", which is not installed: run `npm install`/);
    return true;
  });
});

test('another load failure keeps its own first line', async () => {
  const file = join(dir, 'broken.mjs');
  writeFileSync(file, 'export default {\n');
  await assert.rejects(importHandlerModule(file, {} as HandlerEnv), (e: Error) => {
    assert.match(e.message, /cannot load handler module .*broken\.mjs: /);
    assert.doesNotMatch(e.message, /npm install/);
    return true;
  });
});
