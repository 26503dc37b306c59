import { jsonCopy } from '../core/json-copy.js';

/**
 * The expressions most sagas write — a field path (`item.active`, `` `a b`.c ``) or an object
 * of literals and field paths (`{ "id": parameters.id, "by": "bench" }`) — evaluated as plain
 * property reads, without JSONata's asynchronous evaluator (≈ 20 µs per step, issue 23).
 *
 * JSONata's semantics are kept by reading only what is certain: a missing field is nothing
 * (undefined), a field of null, a string, a number or a boolean is nothing. Whenever the data
 * reaches a case where JSONata does more (an array anywhere on the path: sequences, mapping,
 * flattening), the direct form gives up (SLOW) and the caller evaluates with JSONata, so the
 * answer is always JSONata's. Names that are properties of Object.prototype (`constructor`,
 * `__proto__`, `toString`, ...) are left to JSONata at compile time: the direct form reads own
 * fields only, and never anything of a prototype.
 */

/** The direct form cannot answer for this data: evaluate with JSONata. */
export const SLOW: unique symbol = Symbol('evaluate with JSONata');

/** A compiled direct form: the value (a JSON copy where it is an object), or SLOW. */
export type Direct = (payload: unknown) => unknown;

interface Node {
  type?: string;
  value?: unknown;
  steps?: Node[];
  lhs?: unknown;
  [other: string]: unknown;
}

/** The direct form of a JSONata AST, or undefined when the expression is not one of the simple kinds. */
export function directForm(ast: unknown): Direct | undefined {
  const node = ast as Node;
  const path = pathOf(node);
  if (path !== undefined) {
    return (payload) => {
      const v = read(payload, path);
      return v !== null && typeof v === 'object' ? jsonCopy(v) : v;
    };
  }
  if (node.type === 'unary' && node.value === '{' && Array.isArray(node.lhs)) return objectForm(node.lhs as unknown[]);
  return undefined;
}

/** The field names of a path of plain names, or undefined. */
function pathOf(node: Node): string[] | undefined {
  if (node.type !== 'path' || !Array.isArray(node.steps) || node.steps.length === 0) return undefined;
  const names: string[] = [];
  for (const step of node.steps) {
    if (!isPlain(step, 'name') || typeof step.value !== 'string' || !safeName(step.value)) return undefined;
    names.push(step.value);
  }
  return names;
}

/** An AST node of `type` with nothing attached: no predicates, stages, focus, index, group, sort, ... */
function isPlain(node: Node, type: string): boolean {
  if (node === null || typeof node !== 'object' || node.type !== type) return false;
  for (const key of Object.keys(node)) if (key !== 'type' && key !== 'value' && key !== 'position') return false;
  return true;
}

function safeName(name: string): boolean {
  return name !== '' && !(name in Object.prototype) && name !== '__proto__';
}

/**
 * Read `names` from `value`: undefined where a field is missing or the value is not an object;
 * SLOW at an array (on the path or as the result), where JSONata's sequences apply.
 */
function read(value: unknown, names: readonly string[]): unknown {
  let v = value;
  for (const name of names) {
    if (v === null || typeof v !== 'object') return undefined;
    if (Array.isArray(v)) return SLOW;
    v = Object.hasOwn(v, name) ? (v as Record<string, unknown>)[name] : undefined;
  }
  if (Array.isArray(v)) return SLOW;
  return v;
}

type Part = { key: string; literal: unknown; path?: undefined } | { key: string; path: string[] };

/** `{ "k": literal-or-path, ... }` with distinct string keys, or undefined. */
function objectForm(pairs: unknown[]): Direct | undefined {
  const parts: Part[] = [];
  const keys = new Set<string>();
  for (const pair of pairs) {
    if (!Array.isArray(pair) || pair.length !== 2) return undefined;
    const [k, v] = pair as [Node, Node];
    if (!isPlain(k, 'string') || typeof k.value !== 'string' || !safeName(k.value) || keys.has(k.value))
      return undefined;
    keys.add(k.value);
    const path = pathOf(v);
    if (path !== undefined) parts.push({ key: k.value, path });
    else if (isPlain(v, 'string') || isPlain(v, 'number') || isPlain(v, 'value'))
      parts.push({ key: k.value, literal: v.value });
    else return undefined;
  }
  return (payload) => {
    // JSONata groups an object constructor over a sequence: only a single object is direct
    if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return SLOW;
    const out: Record<string, unknown> = {};
    for (const part of parts) {
      if (part.path === undefined) {
        out[part.key] = part.literal;
        continue;
      }
      const v = read(payload, part.path);
      if (v === SLOW) return SLOW;
      if (v !== undefined) out[part.key] = v !== null && typeof v === 'object' ? jsonCopy(v) : v;
    }
    return out;
  };
}
