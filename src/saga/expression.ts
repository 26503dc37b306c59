import jsonata from 'jsonata';
import type { RequestContext } from '../core/types.js';

/**
 * JSONata for `transform` and `condition` steps. Expressions come from configuration (trusted),
 * are compiled once when the saga loads, and see the payload as `$` and the request context as
 * the variables `$request`, `$user`, `$error` and `$status`.
 */
export interface Expression {
  readonly source: string;
  evaluate(payload: unknown, context: RequestContext): Promise<unknown>;
}

/** Compile an expression; throws with jsonata's message (and position) on a syntax error. */
export function compileExpression(source: string): Expression {
  const compiled = jsonata(source);
  return {
    source,
    async evaluate(payload, context) {
      const bindings = {
        request: context.request,
        user: context.user ?? undefined,
        error: context.error,
        status: context.status,
      };
      return normalize(await compiled.evaluate(payload, bindings));
    },
  };
}

/**
 * JSONata returns arrays tagged as sequences and may share structure with its input, so the
 * result is copied with JSON semantics (functions and `undefined` dropped from objects and
 * `null` in arrays, non-finite numbers `null`): later writes into the payload never reach back
 * into the expression's input, and no cycle can form. Only the containers are copied: strings
 * are immutable and shared, so a result holding large values costs its shape, not its bytes (a
 * JSON round trip serialised and re-read every string on the event loop).
 */
function normalize(value: unknown): unknown {
  if (value === undefined || value === null || typeof value !== 'object') return value;
  return plain(value);
}

function plain(value: unknown): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : null;
    case 'object':
      if (value === null) return null;
      break;
    default:
      return undefined;
  }
  if (Array.isArray(value)) {
    const out: unknown[] = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = plain(value[i]) ?? null;
    return out;
  }
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') return plain(toJSON.call(value));
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value as object)) {
    const v = plain((value as Record<string, unknown>)[key]);
    if (v === undefined) continue;
    // a key named __proto__ (from parsed JSON) stays data: assignment would set the prototype
    if (key === '__proto__')
      Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
    else out[key] = v;
  }
  return out;
}

/** The condition value of a result (DESIGN §4.2): booleans as true/false, null/undefined as `-`. */
export function conditionValue(result: unknown): string {
  if (result === undefined || result === null) return '-';
  if (typeof result === 'string') return result;
  if (typeof result === 'number' || typeof result === 'boolean') return String(result);
  return JSON.stringify(result);
}
