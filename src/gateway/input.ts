import { SagawayError } from '../core/errors.js';
import { isForbiddenKey } from '../core/path.js';

/**
 * Request INPUT (DESIGN §4.1): a JSON object body for POST/PUT/PATCH, the query for GET, DELETE
 * and HEAD. Bodies are parsed here rather than by fastify's default parser so that every failure
 * has our code, and so that prototype-poisoning shapes are refused with 400 INVALID_BODY instead
 * of being silently kept or dropped: a `__proto__` key, and a `constructor` object holding a
 * `prototype` (the rules of secure-json-parse), at any depth, also when written with `\u`
 * escapes. A plain field named `constructor` or `prototype` (a car's maker, a design stage) is
 * ordinary data and passes; paths can never reach into it (src/core/path.ts).
 */

/** Deepest nesting accepted in a body; deeper documents would blow the stack of later walks. */
export const MAX_BODY_DEPTH = 64;
/** Most query parameters read; the rest are ignored. */
export const MAX_QUERY_PARAMS = 256;

const SUSPECT = /__proto__|constructor|\\u/;

/** Parse a JSON body: INVALID_JSON when malformed, INVALID_BODY for forbidden keys or excess depth. */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') throw new SagawayError('INVALID_JSON', 'the request body is empty');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new SagawayError('INVALID_JSON', 'the request body is not valid JSON');
  }
  // Cheap pre-test: forbidden keys can only be present when one of these substrings is.
  checkBody(value, SUSPECT.test(text));
  return value;
}

/** Walk a parsed body iteratively: depth limit always, forbidden keys when `keys` is set. */
function checkBody(root: unknown, keys: boolean): void {
  const stack: Array<[unknown, number]> = [[root, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth > MAX_BODY_DEPTH) {
      throw new SagawayError('INVALID_BODY', `the request body is nested deeper than ${MAX_BODY_DEPTH} levels`);
    }
    if (Array.isArray(node)) {
      for (const item of node) if (typeof item === 'object' && item !== null) stack.push([item, depth + 1]);
      continue;
    }
    for (const key of Object.keys(node)) {
      const child = (node as Record<string, unknown>)[key];
      if (keys && isPoison(key, child)) throw new SagawayError('INVALID_BODY', `the key "${key}" is not allowed here`);
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
}

/** `__proto__`, or a `constructor` object with a `prototype`: the shapes that poison prototypes. */
function isPoison(key: string, value: unknown): boolean {
  if (key === '__proto__') return true;
  return key === 'constructor' && typeof value === 'object' && value !== null && Object.hasOwn(value, 'prototype');
}

/** The INPUT of a body: it must be a JSON object (an absent body is `{}`, a JSON `null` is refused). */
export function bodyInput(body: unknown): Record<string, unknown> {
  if (body === undefined) return {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new SagawayError('INVALID_BODY', 'the request body must be a JSON object');
  }
  return body as Record<string, unknown>;
}

/**
 * Parse a query string: repeated keys become arrays, forbidden keys are skipped, at most
 * MAX_QUERY_PARAMS parameters are read. Plain objects, so downstream code sees ordinary JSON.
 */
export function parseQuery(text: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (text === '') return out;
  let count = 0;
  for (const [key, value] of new URLSearchParams(text)) {
    if (++count > MAX_QUERY_PARAMS) break;
    if (isForbiddenKey(key)) continue;
    // Object.hasOwn: `toString` and friends must not read the inherited members.
    const prev = Object.hasOwn(out, key) ? out[key] : undefined;
    if (prev === undefined) out[key] = value;
    else if (Array.isArray(prev)) prev.push(value);
    else out[key] = [prev, value];
  }
  return out;
}

/** Methods whose INPUT is the body. */
export function usesBody(method: string): boolean {
  return method === 'POST' || method === 'PUT' || method === 'PATCH';
}
