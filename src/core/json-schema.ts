import { createRequire } from 'node:module';
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import type addFormatsModule from 'ajv-formats';

/**
 * Ajv is loaded at the first schema compiled, not when this module is: a configuration without
 * schemas (and `sagaway validate` of one) never pays for it (docs/cli.md, start-up cost). Ajv
 * ships CommonJS, so a synchronous require keeps compile() synchronous.
 */
const require = createRequire(import.meta.url);
let ajvModules: { Ajv2020: typeof Ajv2020; addFormats: typeof addFormatsModule } | undefined;
function loadAjv(): NonNullable<typeof ajvModules> {
  ajvModules ??= {
    Ajv2020: (require('ajv/dist/2020.js') as { Ajv2020: typeof Ajv2020 }).Ajv2020,
    addFormats: require('ajv-formats') as typeof addFormatsModule,
  };
  return ajvModules;
}

/**
 * JSON Schema 2020-12 for what a saga takes and answers (`inputSchema`, `outputSchema`;
 * docs/sagas.md#input-and-output-schemas). Schemas come from the configuration (trusted); the
 * data they check comes from clients. Each schema is compiled once by Ajv into a function;
 * checking a request costs that function and nothing else.
 */

/** A JSON Schema: an object, or `true` / `false`. */
export type JsonSchema = boolean | Record<string, unknown>;

/** One way the data does not match: where (a JSON pointer, RFC 6901) and what is wrong. */
export interface SchemaFailure {
  pointer: string;
  message: string;
}

/** Failures listed in one answer at most: a client learns what to fix, not the whole schema. */
export const MAX_LISTED_FAILURES = 10;

/**
 * Keywords that OpenAPI 3.1 adds to JSON Schema (annotations only): accepted so that a schema
 * written for an OpenAPI document is accepted here. Any other unknown keyword is an error, so
 * that a typo (`requried`) is a located error, not a check that silently never runs.
 */
export const OPENAPI_KEYWORDS = ['discriminator', 'xml', 'externalDocs', 'example'];

/**
 * How Ajv is set up for these schemas (and for the meta-schema check generated at build time,
 * config/write-validators.ts). Unknown keywords and formats are errors (strictSchema); the other
 * strict checks refuse valid schemas (a `required` without `properties`, unions of types) that
 * users write.
 */
export const JSON_SCHEMA_AJV_OPTIONS = {
  allErrors: true,
  strict: false,
  strictSchema: true,
  validateFormats: true,
} as const;

/** The meta-schema's own URI: the only `$schema` a schema may name. */
export const SCHEMA_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

/**
 * The meta-schema check and the keywords and formats Ajv knows, compiled at build time
 * (config/write-validators.ts writes json-schema-meta.generated.cjs beside this file) and
 * loaded at the first schema checked: Ajv compiling the 2020-12 meta-schema at run time cost
 * ≈ 100 ms of every command that loads a configuration with schemas (issue 23).
 */
interface MetaModule {
  meta: ValidateFunction;
  keywords: readonly string[];
  formats: readonly string[];
}
let metaModule: MetaModule | undefined;
export function metaModuleOf(): MetaModule {
  return (metaModule ??= require('./json-schema-meta.generated.cjs') as MetaModule);
}

/** Whether `schema` is a valid 2020-12 schema; the failures (pointers into the schema) when not. */
export function metaFailures(schema: JsonSchema): SchemaFailure[] {
  if (typeof schema === 'object' && schema !== null && Object.hasOwn(schema, '$schema')) {
    const named = schema.$schema;
    if (named !== SCHEMA_2020_12 && named !== `${SCHEMA_2020_12}#`)
      return [{ pointer: '/$schema', message: `must be "${SCHEMA_2020_12}" (JSON Schema 2020-12), or absent` }];
  }
  const { meta } = metaModuleOf();
  if (meta(schema) === true) return [];
  return failuresOf(meta.errors ?? []);
}

/** A set of compiled schemas: one Ajv for bodies and answers, one that coerces query strings. */
export class SchemaCompiler {
  private plain?: Ajv2020;
  private coercing?: Ajv2020;

  /**
   * Compile a schema; throws (Ajv's error, or "schema is invalid: …" as Ajv words it) when it is
   * not a valid schema. `coerce`: the data is a query (strings, repeated keys as arrays),
   * converted in place to the types the schema names ("5" -> 5 for an integer, a single value
   * -> [value] for an array).
   */
  compile(schema: JsonSchema, coerce = false): ValidateFunction {
    const failures = metaFailures(schema);
    if (failures.length > 0)
      throw new Error(`schema is invalid: ${failures.map((f) => `data${f.pointer} ${f.message}`).join(', ')}`);
    return this.ajv(coerce).compile(schema);
  }

  /** Whether `schema` is a valid 2020-12 schema; the failures (pointers into the schema) when not. */
  metaFailures(schema: JsonSchema): SchemaFailure[] {
    return metaFailures(schema);
  }

  private ajv(coerce: boolean): Ajv2020 {
    if (coerce) return (this.coercing ??= newAjv(true));
    return (this.plain ??= newAjv(false));
  }
}

function newAjv(coerce: boolean): Ajv2020 {
  const { Ajv2020, addFormats } = loadAjv();
  const ajv = new Ajv2020({
    ...JSON_SCHEMA_AJV_OPTIONS,
    // compile() checked the schema against the meta-schema already, with the generated check:
    // Ajv would otherwise compile the meta-schema itself (per Ajv instance) to check it again.
    validateSchema: false,
    ...(coerce ? { coerceTypes: 'array' as const } : {}),
  });
  ajv.addVocabulary(OPENAPI_KEYWORDS);
  addFormats.default(ajv);
  return ajv;
}

/** `~` and `/` escaped as RFC 6901 wants. */
function escapeToken(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * Ajv's errors as failures, at most `max`: a missing or unexpected property is reported at the
 * property's own pointer; the messages are Ajv's, which name schema values, never the data.
 */
export function failuresOf(errors: readonly ErrorObject[], max = MAX_LISTED_FAILURES): SchemaFailure[] {
  const out: SchemaFailure[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    if (out.length >= max) break;
    let pointer = e.instancePath;
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'required') {
      pointer += `/${escapeToken(String((e.params as { missingProperty: string }).missingProperty))}`;
      message = 'is required';
    } else if (e.keyword === 'additionalProperties' || e.keyword === 'unevaluatedProperties') {
      const key = (e.params as { additionalProperty?: string; unevaluatedProperty?: string }).additionalProperty;
      const other = (e.params as { unevaluatedProperty?: string }).unevaluatedProperty;
      pointer += `/${escapeToken(String(key ?? other))}`;
      message = 'is not allowed';
    } else if (e.keyword === 'enum') {
      message += `: ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
    }
    const id = `${pointer}\u0000${message}`;
    if (seen.has(id)) continue;
    seen.add(id);
    out.push({ pointer, message });
  }
  return out;
}

/**
 * Where in `schema` an Ajv compile error points, as a JSON pointer, when the error says: an
 * unknown format names its path, an unknown keyword and an unresolved `$ref` are found by
 * looking for them. '' when nothing better is known (the schema itself).
 */
export function compileErrorPointer(schema: JsonSchema, error: Error): string {
  const at = /at path "#([^"]*)"/.exec(error.message);
  if (at) return at[1]!;
  const keyword = /unknown keyword: "([^"]+)"/.exec(error.message)?.[1];
  const missing = (error as Error & { missingRef?: string }).missingRef;
  if (keyword === undefined && missing === undefined) return '';
  return (
    findPointer(schema, (key, value) =>
      keyword !== undefined ? key === keyword : key === '$ref' && value === missing,
    ) ?? ''
  );
}

/** The pointer of the first member (depth first) for which `hit` holds. */
function findPointer(root: unknown, hit: (key: string, value: unknown) => boolean): string | undefined {
  const stack: [unknown, string][] = [[root, '']];
  while (stack.length > 0) {
    const [node, pointer] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    const entries = Array.isArray(node) ? node.map((v, i) => [String(i), v] as const) : Object.entries(node);
    for (const [key, value] of entries) {
      const here = `${pointer}/${escapeToken(key)}`;
      if (!Array.isArray(node) && hit(key, value)) return here;
    }
    for (const [key, value] of entries.reverse()) stack.push([value, `${pointer}/${escapeToken(key)}`]);
  }
  return undefined;
}

/** A JSON pointer's tokens (`/a/0/b~1c` -> ['a', '0', 'b/c']). */
export function pointerTokens(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}
