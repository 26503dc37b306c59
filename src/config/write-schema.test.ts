import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { SCHEMA_FILE, schemaText } from './write-schema.js';

test('schema/sagaway.schema.json is generated from src/config/schema.ts (run `npm run schema` when this fails)', () => {
  assert.equal(readFileSync(SCHEMA_FILE, 'utf8'), schemaText());
});
