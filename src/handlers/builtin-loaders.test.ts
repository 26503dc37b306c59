import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Settings } from '../config/settings.js';
import { BUILTIN_HANDLER_MODULES, listedBuiltinHandlers } from './builtin-loaders.js';
import { BUILTIN_HANDLERS } from './index.js';

test('the on-demand built-ins are the same set of factories as BUILTIN_HANDLERS', async () => {
  assert.deepEqual(Object.keys(BUILTIN_HANDLER_MODULES).sort(), Object.keys(BUILTIN_HANDLERS).sort());
  for (const [name, load] of Object.entries(BUILTIN_HANDLER_MODULES))
    assert.equal(await load(), BUILTIN_HANDLERS[name], name);
});

test('listedBuiltinHandlers loads the built-ins the runners list, not their module entries', async () => {
  const runners = {
    a: { handlers: ['read', './my-handler.js'] },
    b: { handlers: ['read', 'rest', 'toString'] },
  };
  const listed = await listedBuiltinHandlers({ runners } as unknown as Settings);
  assert.deepEqual(Object.keys(listed).sort(), ['read', 'rest']);
  assert.equal(listed['rest'], BUILTIN_HANDLERS['rest']);
});
