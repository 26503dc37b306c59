import { pointerTokens, type JsonSchema } from '../../core/json-schema.js';
import type { SagaDefinition } from '../../config/settings.js';

/**
 * A saga's `inputSchema` and `outputSchema` in the OpenAPI document (issue 28): each becomes a
 * named component (`<runner>.<saga>.input` / `.output`) that the request body and the JSON
 * response refer to; a GET's input schema becomes one query parameter per property, so that a
 * generated client has typed query arguments. The schemas are published as written, with their
 * `examples`; `$id` and `$schema` are left out (the document's dialect is 2020-12) and pointers
 * into a schema (`#/$defs/...`) are rewritten to point into its component.
 */

type Json = Record<string, unknown>;

/** The components of one document's saga schemas, named once each. */
export class IoComponents {
  /** component name -> schema, in the order first used */
  readonly schemas: Record<string, Json> = {};
  private readonly names = new Map<JsonSchema, string>();

  /** A `$ref` to the component of `schema` (made on first use), named after the saga. */
  ref(schema: JsonSchema, runner: string, saga: string, kind: 'input' | 'output'): Json {
    let name = this.names.get(schema);
    if (name === undefined) {
      const base = `${runner}.${saga}.${kind}`.replace(/[^A-Za-z0-9._-]/g, '_');
      name = base;
      for (let i = 2; Object.hasOwn(this.schemas, name); i++) name = `${base}_${i}`;
      this.names.set(schema, name);
      this.schemas[name] = embedded(schema, name);
    }
    return { $ref: `#/components/schemas/${name}` };
  }

  /**
   * The query parameters of a GET/DELETE saga's input schema: one per top-level property when
   * the schema is an object with `properties`, else one `input` object parameter.
   */
  queryParameters(saga: SagaDefinition, runner: string): Json[] | undefined {
    const schema = saga.inputSchema;
    if (schema === undefined) return undefined;
    const props = typeof schema === 'object' ? schema['properties'] : undefined;
    if (props === null || typeof props !== 'object' || Array.isArray(props)) {
      return [
        {
          name: 'input',
          in: 'query',
          description: 'the query is the saga input (parameters)',
          style: 'form',
          explode: true,
          schema: this.ref(schema, runner, saga.id, 'input'),
        },
      ];
    }
    const required = new Set(
      Array.isArray((schema as Json)['required']) ? ((schema as Json)['required'] as string[]) : [],
    );
    return Object.entries(props as Record<string, JsonSchema>).map(([key, prop]) => {
      // Pointers into the whole schema (`#/$defs/tag`) are replaced by what they point at: a
      // parameter cannot refer into a component that nothing else uses.
      const copy = inlined(typeof prop === 'boolean' ? booleanSchema(prop) : prop, schema as Json);
      const description = typeof copy['description'] === 'string' ? { description: copy['description'] } : {};
      return { name: key, in: 'query', required: required.has(key), ...description, schema: copy };
    });
  }
}

/** The first of a schema's `examples`, for a media type's `example`. */
export function firstExample(schema: JsonSchema | undefined): { example: unknown } | Record<string, never> {
  if (schema === undefined || typeof schema !== 'object') return {};
  const examples = schema['examples'];
  return Array.isArray(examples) && examples.length > 0 ? { example: examples[0] } : {};
}

function booleanSchema(value: boolean): Json {
  return value ? {} : { not: {} };
}

/** A schema as a component: a copy, without `$id`/`$schema`, its own pointers rewritten. */
function embedded(schema: JsonSchema, name: string): Json {
  if (typeof schema === 'boolean') return booleanSchema(schema);
  const { $id: _id, $schema: _dialect, ...rest } = schema;
  return rewriteRefs(rest, () => `#/components/schemas/${name}`);
}

/** Deepest chain of pointers followed when a parameter's schema is inlined. */
const MAX_INLINE_DEPTH = 8;

/**
 * A copy of `node` with each `$ref: "#..."` replaced by the part of `root` it points at, to
 * MAX_INLINE_DEPTH levels (a recursive schema is cut there, as `{}`: any value).
 */
function inlined(node: Json, root: Json, depth = 0): Json {
  return transform(node, (ref) => {
    if (depth >= MAX_INLINE_DEPTH) return {};
    const target = pointerTokens(ref.slice(1)).reduce<unknown>(
      (at, token) =>
        at !== null && typeof at === 'object' && Object.hasOwn(at, token) ? (at as Json)[token] : undefined,
      root,
    );
    if (typeof target === 'boolean') return booleanSchema(target);
    return target !== null && typeof target === 'object' ? inlined(target as Json, root, depth + 1) : {};
  });
}

/** A deep copy of `node` whose `$ref: "#..."` point into the component `base()` names. */
function rewriteRefs(node: Json, base: () => string): Json {
  return transform(node, (ref) => ({ $ref: base() + ref.slice(1) }));
}

/** A deep copy of `node` where each object `{ $ref: "#...", ... }` is `local(ref)`'s answer. */
function transform(node: Json, local: (ref: string) => Json): Json {
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(walk);
    if (value === null || typeof value !== 'object') return value;
    const ref = (value as Json)['$ref'];
    if (typeof ref === 'string' && ref.startsWith('#')) {
      const { $ref: _ref, ...siblings } = value as Json;
      const replaced = local(ref);
      return Object.keys(siblings).length === 0 ? replaced : { ...(walk(siblings) as Json), ...replaced };
    }
    const out: Json = {};
    for (const [key, child] of Object.entries(value)) {
      const copy = walk(child);
      // defineProperty: a key named __proto__ stays a plain key of the copy
      Object.defineProperty(out, key, { value: copy, enumerable: true, writable: true, configurable: true });
    }
    return out;
  };
  return walk(node) as Json;
}
