import { createRequire } from 'node:module';
import { jsonCopy } from '../core/json-copy.js';
import type { RequestContext } from '../core/types.js';
import { directForm, SLOW } from './expression-direct.js';

/**
 * JSONata is required, not imported: its one 300 KB CommonJS file, imported as ESM, is first
 * scanned by Node's CommonJS export lexer (≈ 40 ms of `sagaway validate`'s CPU, issue 23);
 * require() runs it as it is.
 */
const jsonata = createRequire(import.meta.url)('jsonata') as typeof import('jsonata');

/**
 * JSONata for `transform` and `condition` steps. Expressions come from configuration (trusted),
 * are compiled once when the saga loads, and see the payload as `$` and the request context as
 * the variables `$request`, `$user`, `$error` and `$status`.
 */
export interface Expression {
  readonly source: string;
  evaluate(payload: unknown, context: RequestContext): Promise<unknown>;
  /**
   * The same value, at once when the expression has a direct form (expression-direct.ts: a field
   * path or an object of literals and paths) and the data lets it answer; else the promise of
   * `evaluate`. The engine's transform and condition steps use it.
   */
  evaluateNow(payload: unknown, context: RequestContext): unknown;
}

/** Compile an expression; throws with jsonata's message (and position) on a syntax error. */
export function compileExpression(source: string): Expression {
  const compiled = jsonata(source);
  const direct = directForm(compiled.ast());
  const slow = async (payload: unknown, context: RequestContext): Promise<unknown> => {
    const bindings = {
      request: context.request,
      user: context.user ?? undefined,
      error: context.error,
      status: context.status,
    };
    return normalize(await compiled.evaluate(payload, bindings));
  };
  if (direct === undefined) return { source, evaluate: slow, evaluateNow: slow };
  const now = (payload: unknown, context: RequestContext): unknown => {
    const value = direct(payload);
    return value === SLOW ? slow(payload, context) : value;
  };
  return {
    source,
    evaluateNow: now,
    evaluate: (payload, context) => {
      try {
        const value = direct(payload);
        return value === SLOW ? slow(payload, context) : Promise.resolve(value);
      } catch (err) {
        return Promise.reject(err as Error);
      }
    },
  };
}

/**
 * JSONata returns arrays tagged as sequences and may share structure with its input, so the
 * result is copied with JSON semantics (core/json-copy.ts): later writes into the payload never
 * reach back into the expression's input, and no cycle can form.
 */
function normalize(value: unknown): unknown {
  if (value === undefined || value === null || typeof value !== 'object') return value;
  return jsonCopy(value);
}

/** The condition value of a result (DESIGN §4.2): booleans as true/false, null/undefined as `-`. */
export function conditionValue(result: unknown): string {
  if (result === undefined || result === null) return '-';
  if (typeof result === 'string') return result;
  if (typeof result === 'number' || typeof result === 'boolean') return String(result);
  return JSON.stringify(result);
}
