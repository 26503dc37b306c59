import { SagawayError } from '../../core/errors.js';
import { countJsonValues, DEFAULT_MAX_VALUES, escapedAt, mayExceedValues } from '../../core/json-values.js';
import { isForbiddenKey } from '../../core/path.js';

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

/** A `\\u` escape of a UTF-16 surrogate (D800-DFFF): the only way a JSON text can write a lone one. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/** Fatal: invalid UTF-8 is refused, never replaced with U+FFFD (which would change what was signed or hashed). */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Parse a JSON body: INVALID_JSON when it is not UTF-8, malformed, repeats a key in one object
 * (JSON.parse would keep the last one silently, so two parsers could read different requests),
 * holds a number too large for a double (JSON.parse gives Infinity, stored as null) or a lone
 * surrogate (`"\\ud800"`: not text in any encoding, so not I-JSON, RFC 7493);
 * TOO_MANY_VALUES past `maxValues` JSON values, counted on the text before it is parsed;
 * INVALID_BODY for forbidden keys or excess depth.
 */
export function parseJsonBody(body: Buffer | string, maxValues = DEFAULT_MAX_VALUES): unknown {
  let text: string;
  if (typeof body === 'string') text = body;
  else {
    try {
      text = UTF8.decode(body);
    } catch {
      throw new SagawayError('INVALID_JSON', 'the request body is not valid UTF-8');
    }
  }
  if (text.trim() === '') throw new SagawayError('INVALID_JSON', 'the request body is empty');
  // Before JSON.parse: what a body costs (to parse, copy, store, list and serialise) grows with
  // its values, and a refused body must not have allocated them.
  if (mayExceedValues(text.length, maxValues) && countJsonValues(text, maxValues) > maxValues) {
    throw new SagawayError('TOO_MANY_VALUES', `the request body holds more than ${maxValues} JSON values`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new SagawayError('INVALID_JSON', 'the request body is not valid JSON');
  }
  // Cheap pre-tests: forbidden keys and lone surrogates can only be present when one of these
  // substrings is (includes, not one regex: a regex alternation took 1 ms per MB, includes 0.05).
  const escapes = text.includes('\\u');
  const keys = escapes || text.includes('__proto__') || text.includes('constructor');
  const surrogates = escapes && SURROGATE_ESCAPE.test(text);
  const members = checkBody(value, keys, surrogates);
  if (members > 0 && memberCount(text) !== members) {
    throw new SagawayError('INVALID_JSON', 'the request body repeats a key in one object');
  }
  return value;
}

/**
 * The members written in a valid JSON text: its colons outside strings (in JSON a colon can only
 * follow an object key). When this is more than the keys the parsed objects hold, some object
 * repeated a key. Linear: it jumps from one colon or string to the next with indexOf.
 */
function memberCount(text: string): number {
  let n = 0;
  let colon = text.indexOf(':');
  let quote = text.indexOf('"');
  while (colon >= 0) {
    if (quote < 0 || colon < quote) {
      n++;
      colon = text.indexOf(':', colon + 1);
      continue;
    }
    // Skip the string that opens at `quote`: its end is the next quote not escaped.
    let end = text.indexOf('"', quote + 1);
    while (end > 0 && escapedAt(text, end)) end = text.indexOf('"', end + 1);
    if (end < 0) break; // unreachable for text JSON.parse accepted
    if (colon < end) colon = text.indexOf(':', end + 1);
    quote = text.indexOf('"', end + 1);
  }
  return n;
}

/**
 * Walk a parsed body iteratively: depth limit and finite numbers always, forbidden keys when
 * `keys` is set, lone surrogates in keys and strings when `surrogates` is set. Returns how many
 * keys its objects hold in all.
 */
function checkBody(root: unknown, keys: boolean, surrogates: boolean): number {
  let count = 0;
  checkScalar(root, surrogates);
  const stack: Array<[unknown, number]> = [[root, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth > MAX_BODY_DEPTH) {
      throw new SagawayError('INVALID_BODY', `the request body is nested deeper than ${MAX_BODY_DEPTH} levels`);
    }
    if (Array.isArray(node)) {
      for (const item of node) {
        if (typeof item === 'object' && item !== null) stack.push([item, depth + 1]);
        else checkScalar(item, surrogates);
      }
      continue;
    }
    const own = Object.keys(node);
    count += own.length;
    for (const key of own) {
      const child = (node as Record<string, unknown>)[key];
      if (keys && isPoison(key, child)) throw new SagawayError('INVALID_BODY', `the key "${key}" is not allowed here`);
      if (surrogates && !wellFormed(key)) throw loneSurrogate();
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
      else checkScalar(child, surrogates);
    }
  }
  return count;
}

/** INVALID_JSON for a number JSON.parse turned into Infinity, or a string with a lone surrogate. */
function checkScalar(value: unknown, surrogates: boolean): void {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new SagawayError('INVALID_JSON', 'the request body holds a number out of range');
  } else if (surrogates && typeof value === 'string' && !wellFormed(value)) throw loneSurrogate();
}

function loneSurrogate(): SagawayError {
  return new SagawayError('INVALID_JSON', 'the request body holds a lone surrogate (\\uD800-\\uDFFF without its pair)');
}

/** String.prototype.isWellFormed (Node 20+, ES2024: not in this project's ES2023 lib types). */
function wellFormed(s: string): boolean {
  return (s as unknown as { isWellFormed(): boolean }).isWellFormed();
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

/** Media types of a JSON body: `application/json` and `application/*+json`, parameters ignored. */
export const JSON_MEDIA_TYPE = /^application\/(?:[\w.-]+\+)?json$/i;

/** Whether a Content-Type header names a JSON media type. */
export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const semi = header.indexOf(';');
  return JSON_MEDIA_TYPE.test((semi < 0 ? header : header.slice(0, semi)).trim());
}

/** Methods whose INPUT is the body. */
export function usesBody(method: string): boolean {
  return method === 'POST' || method === 'PUT' || method === 'PATCH';
}
