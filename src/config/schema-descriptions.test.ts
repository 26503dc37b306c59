import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigSchema, SagaFileSchema } from './schema.js';

/**
 * Every key of the published JSON Schema has a `description`, so that editors show what it
 * means while one types it (a key added without one fails here).
 */

type Node = Record<string, unknown>;

/** `path` of every property that has no description, walking objects, arrays, unions and maps. */
function undescribed(schema: unknown, path: string, out: Set<string>, seen = new Set<unknown>()): Set<string> {
  if (schema === null || typeof schema !== 'object' || seen.has(schema)) return out;
  seen.add(schema);
  const node = schema as Node;
  const properties = node['properties'] as Record<string, Node> | undefined;
  for (const [key, prop] of Object.entries(properties ?? {})) {
    const where = path === '' ? key : `${path}.${key}`;
    if (typeof prop['description'] !== 'string' || prop['description'].trim() === '') out.add(where);
    undescribed(prop, where, out, seen);
  }
  for (const key of ['items', 'additionalProperties', 'then', 'else'])
    if (typeof node[key] === 'object') undescribed(node[key], key === 'items' ? `${path}[]` : path, out, seen);
  for (const value of Object.values((node['patternProperties'] as Record<string, unknown>) ?? {}))
    undescribed(value, `${path}.*`, out, seen);
  for (const key of ['anyOf', 'oneOf', 'allOf'])
    for (const sub of (node[key] as unknown[]) ?? []) undescribed(sub, path, out, seen);
  return out;
}

test('every key of the configuration schema has a description', () => {
  const missing = [...undescribed(ConfigSchema, '', new Set())];
  assert.deepEqual(missing, [], `keys without a description:\n${missing.join('\n')}`);
});

test('every key of the saga file schema has a description', () => {
  const missing = [...undescribed(SagaFileSchema, '', new Set())];
  assert.deepEqual(missing, [], `keys without a description:\n${missing.join('\n')}`);
});

test('the walk finds a key without a description', () => {
  const schema = {
    type: 'object',
    properties: { a: { type: 'object', properties: { b: { type: 'string' } }, description: 'x' } },
  };
  assert.deepEqual([...undescribed(schema, '', new Set())], ['a.b']);
});
