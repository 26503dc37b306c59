import type { ValidateFunction } from 'ajv';
import { dirname, extname, resolve } from 'node:path';
import { quickCheck } from '../core/json-schema-check.js';
import {
  compileErrorPointer,
  metaFailures,
  pointerTokens,
  SchemaCompiler,
  type JsonSchema,
  type SchemaFailure,
} from '../core/json-schema.js';
import type { RawSaga } from '../saga/schema.js';
import type { Report } from './compile.js';
import type { RunnerSettings, SagaDefinition } from './settings.js';

/**
 * A saga's `inputSchema` and `outputSchema` (docs/sagas.md#input-and-output-schemas): a
 * `{ $ref: FILE }` is read when the configuration loads, every schema is checked then (a broken
 * one is an error located at the schema, or in its file) and compiled once, at its first use. The compiled functions
 * are kept beside the saga (never in the frozen settings) for the gateway, `sagaway run` and
 * the test kit.
 */

/** The keys of a saga that hold a schema. */
export const IO_KEYS = ['inputSchema', 'outputSchema'] as const;
type IoKey = (typeof IO_KEYS)[number];

/** The compiled schemas of one saga; absent = the saga declares none. */
export interface SagaSchemas {
  /** the input of POST, PUT and PATCH (the JSON body), not coerced */
  body?: ValidateFunction;
  /** the input of GET, DELETE and HEAD (the query), its strings coerced to the schema's types */
  query?: ValidateFunction;
  /** the response of a SUCCESS outcome */
  output?: ValidateFunction;
}

/** What a read of a schema file gives: its value, or undefined (then the reader reported why). */
export type ReadSchemaFile = (abs: string) => Promise<{ value: unknown } | undefined>;

const compiled = new WeakMap<RawSaga, SagaSchemas>();
/** Where each schema read from a file came from, to locate its errors in that file. */
const fromFile = new WeakMap<object, string>();
const BODY_METHODS = ['POST', 'PUT', 'PATCH'];

/** `{ $ref: "file" }` alone, not a pointer into the schema itself (`#/...`). */
function fileRef(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const keys = Object.keys(value);
  const ref = (value as { $ref?: unknown }).$ref;
  return keys.length === 1 && typeof ref === 'string' && !ref.startsWith('#') ? ref : undefined;
}

/**
 * Replace each `{ $ref: FILE }` schema of `sagas` with the file's content (JSON or YAML,
 * relative to the file that holds the saga). A file read by several sagas is read once.
 */
export async function resolveSchemaFiles(
  sagas: readonly SagaDefinition[],
  read: ReadSchemaFile,
  report: Report,
): Promise<void> {
  const cache = new Map<string, Promise<{ value: unknown } | undefined>>();
  for (const saga of sagas) {
    for (const key of IO_KEYS) {
      const ref = fileRef(saga[key]);
      if (ref === undefined) continue;
      const at = [...saga.source.at, key, '$ref'];
      if (/^[a-z][a-z0-9+.-]*:/i.test(ref) || ref.includes('#')) {
        report(saga.source.file, at, 'a schema $ref names a file relative to this one (no URL, no #fragment)');
        continue;
      }
      if (!['.json', '.yaml', '.yml'].includes(extname(ref).toLowerCase())) {
        report(saga.source.file, at, 'a schema file is .json, .yaml or .yml');
        continue;
      }
      const abs = resolve(dirname(saga.source.file), ref);
      let pending = cache.get(abs);
      if (pending === undefined) cache.set(abs, (pending = read(abs)));
      const loaded = await pending;
      if (loaded === undefined) {
        report(saga.source.file, at, `the schema file ${ref} cannot be used`);
        continue;
      }
      if (typeof loaded.value === 'object' && loaded.value !== null) fromFile.set(loaded.value, abs);
      (saga as Record<IoKey, unknown>)[key] = loaded.value;
    }
  }
}

/**
 * Compile the schemas of every saga (one compiler per configuration, so that two loads of one
 * file never clash on a schema's `$id`) and report each broken one where it is written.
 */
export function compileIoSchemas(runners: Readonly<Record<string, RunnerSettings>>, report: Report): void {
  const compiler = new SchemaCompiler();
  for (const runner of Object.values(runners)) {
    for (const saga of runner.sagas) {
      const problem = compileSaga(saga, compiler);
      if (problem === undefined) continue;
      const schema = saga[problem.key] as JsonSchema;
      const file = typeof schema === 'object' ? fromFile.get(schema) : undefined;
      const tokens = pointerTokens(problem.failure.pointer);
      if (file !== undefined) report(file, tokens, `${problem.key}: ${problem.failure.message}`);
      else report(saga.source.file, [...saga.source.at, problem.key, ...tokens], problem.failure.message);
    }
  }
}

/** Functions compiled at their first call (lazily below), and how to compile each now. */
const warmers = new WeakMap<ValidateFunction, () => void>();

/**
 * A validate function that compiles `schema` at its first call: a schema that passed the
 * meta-schema and the quick check (core/json-schema-check.ts) compiles, so the configuration
 * loads without loading Ajv (issue 23); `sagaway start` compiles them just after it listens
 * (warmSagaSchemas), a request never waits for it unless it comes first.
 */
function lazily(make: () => ValidateFunction): ValidateFunction {
  let fn: ValidateFunction | undefined;
  const check = ((data: unknown) => {
    fn ??= make();
    const ok = fn(data);
    check.errors = fn.errors;
    return ok;
  }) as ValidateFunction;
  check.errors = null;
  warmers.set(check, () => void (fn ??= make()));
  return check;
}

/**
 * Check one saga's schemas and put their validate functions in the cache; the first problem
 * found, if any. A schema the quick check cannot judge is compiled by Ajv at once.
 */
function compileSaga(saga: RawSaga, compiler: SchemaCompiler): { key: IoKey; failure: SchemaFailure } | undefined {
  const out: SagaSchemas = {};
  for (const key of IO_KEYS) {
    const schema = saga[key];
    if (schema === undefined) continue;
    const meta = metaFailures(schema);
    if (meta.length > 0) return { key, failure: meta[0]! };
    const quick = quickCheck(schema);
    if (quick !== 'unsure' && !quick.ok) return { key, failure: quick.failure };
    const make = quick === 'unsure' ? (f: () => ValidateFunction) => f() : lazily;
    try {
      if (key === 'outputSchema') out.output = make(() => compiler.compile(schema));
      else {
        const methods = saga.methods ?? ['GET'];
        if (methods.some((m) => BODY_METHODS.includes(m))) out.body = make(() => compiler.compile(schema));
        if (methods.some((m) => !BODY_METHODS.includes(m))) out.query = make(() => compiler.compile(schema, true));
      }
    } catch (err) {
      const message = (err as Error).message
        .replace(/^strict mode: /, '')
        .replace(/ ignored in schema at path .*$/, '');
      return { key, failure: { pointer: compileErrorPointer(schema, err as Error), message } };
    }
  }
  compiled.set(saga, out);
  return undefined;
}

/**
 * Compile now every schema of `runners` left to its first use (`sagaway start` calls this once
 * it listens, so that the first request does not pay for loading Ajv). Never throws: a schema
 * that fails here would fail at its first use, which answers that request with an error.
 */
export function warmSagaSchemas(runners: Readonly<Record<string, RunnerSettings>>): void {
  for (const runner of Object.values(runners))
    for (const saga of runner.sagas) {
      const fns = compiled.get(saga);
      if (fns === undefined) continue;
      for (const fn of [fns.body, fns.query, fns.output]) {
        try {
          if (fn !== undefined) warmers.get(fn)?.();
        } catch {
          // reported by the request that uses it
        }
      }
    }
}

let lazyCompiler: SchemaCompiler | undefined;

/**
 * The compiled schemas of a saga: those compiled at load, else (settings made by code, never
 * loaded) compiled now, once. Throws when a saga made by code holds a broken schema.
 */
export function sagaSchemas(saga: RawSaga): SagaSchemas {
  const known = compiled.get(saga);
  if (known !== undefined) return known;
  if (saga.inputSchema === undefined && saga.outputSchema === undefined) return {};
  const problem = compileSaga(saga, (lazyCompiler ??= new SchemaCompiler()));
  if (problem !== undefined) {
    throw new Error(`saga "${saga.id}": ${problem.key} ${problem.failure.pointer}: ${problem.failure.message}`);
  }
  return compiled.get(saga)!;
}
