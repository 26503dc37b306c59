import { metaModuleOf, type JsonSchema, type SchemaFailure } from './json-schema.js';

/**
 * What Ajv's compile refuses in a schema that the meta-schema accepts, found without compiling
 * it: an unknown keyword, an unknown format, a `pattern` that is not a regular expression. With
 * it, a configuration's schemas are checked when it loads (every error located, as before) and
 * compiled only when first used: loading Ajv and compiling the schemas was ≈ 150 ms of
 * `sagaway validate` and of `sagaway start` before it listened (issue 23).
 *
 * The check follows what Ajv (8, strictSchema) compiles: the subschemas under the applicator
 * keywords below; `$defs` are compiled only through a `$ref`. A schema that uses a keyword whose
 * compile-time rules are more than that (references, `if`/`then`/`else`, `contains`, pattern
 * properties, …) is `unsure`: its caller compiles it with Ajv at once, as before. The unit test
 * (json-schema-check.test.ts) compares this verdict with Ajv's on every kind of schema.
 */
export type QuickVerdict = { ok: true } | { ok: false; failure: SchemaFailure } | 'unsure';

/** Keywords whose value is one subschema. */
const ONE = new Set([
  'not',
  'items',
  'additionalProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'propertyNames',
]);
/** Keywords whose value is an array of subschemas. */
const LIST = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
/** Keywords whose value maps names to subschemas. */
const MAP = new Set(['properties', 'dependentSchemas']);
/** Keywords with compile-time rules (or references) that this check leaves to Ajv. */
const UNSURE = new Set([
  '$ref',
  '$dynamicRef',
  '$dynamicAnchor',
  '$recursiveRef',
  '$recursiveAnchor',
  '$anchor',
  '$id',
  'id',
  '$schema',
  '$vocabulary',
  '$async',
  'additionalItems',
  'if',
  'then',
  'else',
  'contains',
  'minContains',
  'maxContains',
  'patternProperties',
  'dependencies',
  'nullable',
  'formatMaximum',
  'formatMinimum',
  'formatExclusiveMaximum',
  'formatExclusiveMinimum',
]);

let known: { keywords: Set<string>; formats: Set<string> } | undefined;

/** `~` and `/` escaped as RFC 6901 wants. */
const token = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * Ajv's compile verdict on a schema that passed the meta-schema check (json-schema.ts
 * metaFailures), when this check can tell; the failure is worded as Ajv words it.
 */
export function quickCheck(schema: JsonSchema): QuickVerdict {
  if (known === undefined) {
    const meta = metaModuleOf();
    known = { keywords: new Set(meta.keywords), formats: new Set(meta.formats) };
  }
  const stack: [unknown, string][] = [[schema, '']];
  while (stack.length > 0) {
    const [node, pointer] = stack.pop()!;
    if (typeof node !== 'object' || node === null || Array.isArray(node)) continue;
    for (const [key, value] of Object.entries(node)) {
      const at = `${pointer}/${token(key)}`;
      if (UNSURE.has(key)) return 'unsure';
      if (!known.keywords.has(key))
        return { ok: false, failure: { pointer: at, message: `unknown keyword: "${key}"` } };
      if (key === 'format' && typeof value === 'string' && !known.formats.has(value))
        return { ok: false, failure: { pointer, message: `unknown format "${value}"` } };
      if (key === 'pattern' && typeof value === 'string') {
        try {
          new RegExp(value, 'u');
        } catch (e) {
          return { ok: false, failure: { pointer: at, message: (e as Error).message } };
        }
      }
      if (ONE.has(key)) stack.push([value, at]);
      else if (LIST.has(key) && Array.isArray(value)) value.forEach((v, i) => stack.push([v, `${at}/${i}`]));
      else if (MAP.has(key) && typeof value === 'object' && value !== null)
        for (const [name, v] of Object.entries(value)) stack.push([v, `${at}/${token(name)}`]);
    }
  }
  return { ok: true };
}
