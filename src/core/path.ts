import { SagawayError } from './errors.js';

/**
 * Payload paths (DESIGN §6.2): dot-separated keys with optional `[n]` indexes; `$.` anchors at the
 * payload root and `$` alone is the root. Nothing is ever evaluated: there are no wildcards,
 * filters or expressions, and the keys that reach an object's prototype are refused.
 */

export type Segment = string | number;

/** A parsed path. `root` is true for `$` and `$.x` (anchored at the payload root). */
export interface PayloadPath {
  readonly text: string;
  readonly root: boolean;
  readonly segments: readonly Segment[];
}

export const PATH_MAX_LENGTH = 256;
export const PATH_MAX_SEGMENTS = 32;
/** Largest array index a path may name; bigger ones would let a request allocate huge arrays. */
export const PATH_MAX_INDEX = 100_000;

const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'prototype', 'constructor']);

/** Whether a key would reach an object's prototype chain. */
export function isForbiddenKey(key: string): boolean {
  return FORBIDDEN_KEYS.has(key);
}

function invalid(text: string, why: string): SagawayError {
  return new SagawayError('INVALID_PATH', `invalid path "${text.slice(0, 64)}": ${why}`);
}

/** Parse a path; throws INVALID_PATH for bad syntax, forbidden keys or paths over the limits. */
export function parsePath(text: string): PayloadPath {
  if (text.length > PATH_MAX_LENGTH) throw invalid(text, `longer than ${PATH_MAX_LENGTH} characters`);
  if (text === '$') return { text, root: true, segments: [] };
  const root = text.startsWith('$.');
  const body = root ? text.slice(2) : text;
  if (body === '') throw invalid(text, 'empty');
  const segments: Segment[] = [];
  let i = 0;
  // Grammar: key ( '[' digits ']' )* ( '.' key ( '[' digits ']' )* )*
  for (;;) {
    let key = '';
    while (i < body.length && body[i] !== '.' && body[i] !== '[') {
      if (body[i] === ']') throw invalid(text, `unexpected "]" at ${i}`);
      key += body[i++];
    }
    if (key === '') throw invalid(text, `empty key at ${i}`);
    if (isForbiddenKey(key)) throw invalid(text, `key "${key}" is not allowed`);
    segments.push(key);
    while (body[i] === '[') {
      const close = body.indexOf(']', i);
      if (close < 0) throw invalid(text, 'unclosed "["');
      const digits = body.slice(i + 1, close);
      if (!/^(?:0|[1-9][0-9]{0,5})$/.test(digits)) throw invalid(text, `bad index "[${digits.slice(0, 8)}]"`);
      const index = Number(digits);
      if (index > PATH_MAX_INDEX) throw invalid(text, `index over ${PATH_MAX_INDEX}`);
      segments.push(index);
      i = close + 1;
    }
    if (segments.length > PATH_MAX_SEGMENTS) throw invalid(text, `more than ${PATH_MAX_SEGMENTS} segments`);
    if (i >= body.length) break;
    if (body[i] !== '.') throw invalid(text, `unexpected "${body[i]}" at ${i}`);
    i++;
    if (i >= body.length) throw invalid(text, 'ends with "."');
  }
  return { text, root, segments };
}

const parsed = new Map<string, PayloadPath>();
const PARSED_MAX = 10_000;

/**
 * parsePath with a bounded cache: configured paths are parsed once, not on every event. Paths
 * made by inject vary per request, so the cache is cleared when it fills rather than grown.
 */
export function parsePathCached(text: string): PayloadPath {
  let path = parsed.get(text);
  if (path === undefined) {
    path = parsePath(text);
    if (parsed.size >= PARSED_MAX) parsed.clear();
    parsed.set(text, Object.freeze({ ...path, segments: Object.freeze([...path.segments]) }));
  }
  return path;
}

/** Read the value at `segments` below `base`; own properties only, undefined when absent. */
export function readPath(base: unknown, segments: readonly Segment[]): unknown {
  let node: unknown = base;
  for (const seg of segments) {
    if (typeof seg === 'number') {
      if (!Array.isArray(node) || seg >= node.length) return undefined;
      node = node[seg];
    } else {
      if (typeof node !== 'object' || node === null || Array.isArray(node)) return undefined;
      if (!Object.hasOwn(node, seg)) return undefined;
      node = (node as Record<string, unknown>)[seg];
    }
  }
  return node;
}

/**
 * Write `value` at `segments` below `base`, creating missing objects (for keys) and arrays (for
 * indexes). An index may be at most the array's length (append). A non-container in the way is
 * an OUTPUT_PATH_CONFLICT rather than silently overwritten. `segments` must not be empty.
 */
export function writePath(base: Record<string, unknown>, segments: readonly Segment[], value: unknown): void {
  if (segments.length === 0) throw new SagawayError('INVALID_PATH', 'cannot write at the root');
  checkWritable(base, segments);
  let node: unknown = base;
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i] as Segment;
    const last = i === segments.length - 1;
    const nextSeg = segments[i + 1];
    if (typeof seg === 'number') {
      if (!Array.isArray(node)) throw conflict(segments, i);
      if (seg > node.length) throw conflict(segments, i, `index ${seg} is past the end (${node.length})`);
      if (last) {
        node[seg] = value;
        return;
      }
      node = ensureChild(node as unknown as Record<number, unknown>, seg, nextSeg, segments, i);
    } else {
      if (typeof node !== 'object' || node === null || Array.isArray(node)) throw conflict(segments, i);
      if (isForbiddenKey(seg)) throw new SagawayError('INVALID_PATH', `key "${seg}" is not allowed`);
      if (last) {
        (node as Record<string, unknown>)[seg] = value;
        return;
      }
      node = ensureChild(node as Record<string, unknown>, seg, nextSeg, segments, i);
    }
  }
}

/**
 * Find any conflict before changing anything, so that a failed write leaves the payload as it
 * was. Below the first missing (or null) container everything is created fresh, so the only
 * possible conflict there is an index other than 0 into a new, empty array.
 */
function checkWritable(base: unknown, segments: readonly Segment[]): void {
  let node: unknown = base;
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i] as Segment;
    if (typeof seg === 'number') {
      if (!Array.isArray(node)) throw conflict(segments, i);
      if (seg > node.length) throw conflict(segments, i, `index ${seg} is past the end (${node.length})`);
      node = seg < node.length ? node[seg] : undefined;
    } else {
      if (typeof node !== 'object' || node === null || Array.isArray(node)) throw conflict(segments, i);
      node = Object.hasOwn(node, seg) ? (node as Record<string, unknown>)[seg] : undefined;
    }
    if (i === segments.length - 1) return;
    if (node === undefined || node === null) {
      for (let j = i + 1; j < segments.length; j++) {
        const next = segments[j];
        if (typeof next === 'number' && next !== 0) throw conflict(segments, j, `index ${next} is past the end (0)`);
      }
      return;
    }
    if (typeof node !== 'object') throw conflict(segments, i + 1);
  }
}

function ensureChild(
  container: Record<string | number, unknown>,
  key: string | number,
  nextSeg: Segment | undefined,
  segments: readonly Segment[],
  i: number,
): unknown {
  const has = Array.isArray(container) ? (key as number) < container.length : Object.hasOwn(container, key);
  const existing = has ? container[key] : undefined;
  if (existing === undefined || existing === null) {
    const created: unknown = typeof nextSeg === 'number' ? [] : {};
    container[key] = created;
    return created;
  }
  if (typeof existing !== 'object') throw conflict(segments, i + 1);
  return existing;
}

function conflict(segments: readonly Segment[], i: number, why?: string): SagawayError {
  const at = formatSegments(segments.slice(0, i)) || '$';
  return new SagawayError(
    'OUTPUT_PATH_CONFLICT',
    why ?? `cannot write below "${at}": not a container of the right kind`,
  );
}

/** Render segments back to path text (`a.b[0].c`). */
export function formatSegments(segments: readonly Segment[]): string {
  let out = '';
  for (const seg of segments) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out === '' ? seg : `.${seg}`;
  }
  return out;
}

/**
 * Copy own enumerable keys of `source` into `target`. An own `__proto__` key (JSON.parse makes
 * them) is skipped: assigning it would replace the target's prototype. Fields named
 * `constructor` or `prototype` are plain data here and are copied as own properties.
 */
export function safeAssign(target: Record<string, unknown>, source: Record<string, unknown>): void {
  for (const key of Object.keys(source)) {
    if (key === '__proto__') continue;
    target[key] = source[key];
  }
}

/** Whether a value is a plain JSON object (not an array, not null). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
