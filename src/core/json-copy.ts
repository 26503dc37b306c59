/**
 * A copy of a value with JSON semantics, without the text in between: what
 * `JSON.parse(JSON.stringify(value))` gives, for the values JSON can hold. Functions, symbols and
 * `undefined` are dropped from objects and become `null` in arrays; non-finite numbers are
 * `null`; `toJSON` is honoured (dates become strings); a `__proto__` key stays data. Only the
 * containers are copied: strings are immutable and shared, so a large value costs its shape, not
 * its bytes (the round trip serialised and re-read every string on the event loop).
 *
 * Throws NotJsonError where JSON.stringify throws: a BigInt, or a cycle (found as nesting deeper
 * than MAX_DEPTH, which no configuration payload needs).
 */
export function jsonCopy(value: unknown): unknown {
  return copy(value, 0);
}

/** The value cannot be JSON data (a BigInt, or a cycle). */
export class NotJsonError extends TypeError {}

/** Nesting deeper than this is taken for a cycle. */
export const MAX_DEPTH = 512;

function copy(value: unknown, depth: number): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : null;
    case 'bigint':
      throw new NotJsonError('a BigInt is not JSON data');
    case 'object':
      if (value === null) return null;
      break;
    default:
      return undefined;
  }
  if (depth >= MAX_DEPTH) throw new NotJsonError('nesting too deep (a cycle?)');
  if (Array.isArray(value)) {
    const out: unknown[] = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = copy(value[i], depth + 1) ?? null;
    return out;
  }
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') return copy(toJSON.call(value), depth + 1);
  if (value instanceof Number || value instanceof String || value instanceof Boolean)
    return copy(value.valueOf(), depth);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value as object)) {
    const v = copy((value as Record<string, unknown>)[key], depth + 1);
    if (v === undefined) continue;
    // a key named __proto__ (from parsed JSON) stays data: assignment would set the prototype
    if (key === '__proto__')
      Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
    else out[key] = v;
  }
  return out;
}
