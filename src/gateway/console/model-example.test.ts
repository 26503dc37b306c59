import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadConfig } from '../../config/load.js';
import { buildModel } from './model.js';

test("the console model carries each saga's first input example, for try-it", async () => {
  const { settings } = await loadConfig(join('examples', 'todo', 'sagaway.yaml'), {
    env: { ...process.env, TODO_DB: ':memory:' },
  });
  const sagas = buildModel(settings).sagas;
  assert.deepEqual(sagas.find((s) => s.id === 'create-todo')?.example, { title: 'buy milk' });
  assert.equal(
    Object.hasOwn(
      sagas.find((s) => s.id === 'feed')!,
      'example',
    ),
    false,
    'no schema, no example',
  );
});
