import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { quickCheck } from './json-schema-check.js';
import { JSON_SCHEMA_AJV_OPTIONS, metaFailures, OPENAPI_KEYWORDS, type JsonSchema } from './json-schema.js';

/** Ajv as it compiled every schema before the quick check: its meta-schema check included. */
function ajvVerdict(schema: JsonSchema): 'ok' | 'refused' {
  const ajv = new Ajv2020({ ...JSON_SCHEMA_AJV_OPTIONS });
  ajv.addVocabulary(OPENAPI_KEYWORDS);
  addFormats.default(ajv);
  try {
    ajv.compile(schema);
    return 'ok';
  } catch {
    return 'refused';
  }
}

/** Every kind of schema: valid, each way Ajv refuses one, and the keywords left to Ajv. */
const CASES: JsonSchema[] = [
  true,
  false,
  {},
  { type: 'object', required: ['title'], properties: { title: { type: 'string', minLength: 1 } } },
  { type: ['string', 'null'], maxLength: 3, description: 'x', examples: [1], default: 'a', title: 't' },
  { type: 'array', items: { type: 'integer', minimum: 0 }, prefixItems: [{ const: 1 }], uniqueItems: true },
  { anyOf: [{ type: 'string', format: 'email' }, { type: 'number' }], not: { enum: [1, 2] } },
  { oneOf: [{ format: 'uuid' }, { format: 'date-time' }], allOf: [{ readOnly: true }] },
  { properties: { a: { properties: { b: { requried: [] } } } } },
  { items: { bogus: 1 } },
  { additionalProperties: { format: 'uuidd' } },
  { propertyNames: { pattern: '^[a-z]+$' } },
  { pattern: '(' },
  { pattern: '\\p{L}+' },
  { properties: { x: { pattern: '[' } } },
  { dependentSchemas: { a: { nope: true } } },
  { dependentRequired: { a: ['b'] }, unevaluatedProperties: false },
  { unevaluatedItems: { type: 'string', format: 'nope' } },
  { enum: [{ requried: 1 }], const: { bogus: 1 } },
  { discriminator: { propertyName: 'kind' }, xml: {}, externalDocs: {}, example: 1 },
  { contentMediaType: 'application/json', contentSchema: { type: 'object' } },
  { $defs: { unused: { bogus: 1 } } },
  { $ref: '#/$defs/a', $defs: { a: { type: 'string' } } },
  { $ref: '#/$defs/missing' },
  { if: { type: 'string' } },
  { contains: { type: 'string' }, minContains: 0 },
  { patternProperties: { '^a': { type: 'string' } }, properties: { ab: {} } },
  { nullable: true },
  { $id: 'https://example.com/s', type: 'object' },
  { type: 'string', format: 5 },
  { type: 'strng' },
  { minLength: -1 },
];

test('the quick check judges every schema as Ajv compiling it does, or leaves it to Ajv', () => {
  let judged = 0;
  for (const schema of CASES) {
    const meta = metaFailures(schema);
    const quick = meta.length > 0 ? { ok: false } : quickCheck(schema);
    if (quick === 'unsure') continue;
    judged++;
    assert.equal(quick.ok ? 'ok' : 'refused', ajvVerdict(schema), JSON.stringify(schema));
  }
  assert.ok(judged >= 24, `judged ${judged} of ${CASES.length}`);
});

test('the quick check locates what it refuses as Ajv words it', () => {
  assert.deepEqual(quickCheck({ properties: { a: { requried: [] } } }), {
    ok: false,
    failure: { pointer: '/properties/a/requried', message: 'unknown keyword: "requried"' },
  });
  assert.deepEqual(quickCheck({ properties: { 'a/b': { format: 'uuidd' } } }), {
    ok: false,
    failure: { pointer: '/properties/a~1b', message: 'unknown format "uuidd"' },
  });
  const bad = quickCheck({ anyOf: [{ pattern: '(' }] });
  assert.ok(bad !== 'unsure' && !bad.ok && bad.failure.pointer === '/anyOf/0/pattern', JSON.stringify(bad));
  assert.equal(quickCheck({ $ref: '#/$defs/a' }), 'unsure');
});

test('a $schema other than 2020-12 is a located error, not an exception', () => {
  assert.deepEqual(
    metaFailures({ $schema: 'http://json-schema.org/draft-07/schema#' }).map((f) => f.pointer),
    ['/$schema'],
  );
  assert.deepEqual(metaFailures({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'string' }), []);
});
