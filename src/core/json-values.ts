/**
 * Counting the values of a JSON text without parsing it. What a JSON document costs to parse,
 * copy, store and serialise grows with its number of values, not its bytes: a 1 MB body of
 * 330,000 empty arrays took about a second of the event loop, a 1 MB string a millisecond. The
 * count lets a limit refuse such a document before a single object of it is allocated.
 */

/**
 * Default of `gateway.limits.maxValues`: the JSON values one request body may hold
 * (docs/security.md; the cost per value is measured by bench/load).
 */
export const DEFAULT_MAX_VALUES = 10_000;

/**
 * Default of `states.<alias>.maxValues`: the JSON values one stored record, and one list page,
 * may hold. Above the body's default, so that a record a body created can take a few patches.
 */
export const DEFAULT_MAX_RECORD_VALUES = 20_000;

/**
 * The number of JSON values in a valid JSON text (the root, every array element and every
 * object member's value; keys are not values), or the first count past `max` once it passes
 * it. Exact for valid JSON: a non-empty container of k items holds k - 1 commas, so the count is
 * 1 + the commas + the non-empty containers, all outside strings. Linear; strings are skipped
 * with indexOf.
 */
export function countJsonValues(text: string, max = Infinity): number {
  let n = 1;
  const len = text.length;
  for (let i = 0; i < len; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      i = stringEnd(text, i);
      if (i < 0) break; // unterminated: not JSON, the parser will say so
    } else if (c === 0x2c) {
      if (++n > max) return n;
    } else if (c === 0x5b || c === 0x7b) {
      let j = i + 1;
      while (isSpace(text.charCodeAt(j))) j++;
      const d = text.charCodeAt(j);
      if (d !== 0x5d && d !== 0x7d && ++n > max) return n;
    }
  }
  return n;
}

/**
 * Whether a text of this length can hold more than `max` values: every value but the root takes
 * a character and a separator of its own (a comma, or the bracket of the container that holds
 * it first), so a text holds at most length / 2 + 1. Shorter texts need no count.
 */
export function mayExceedValues(length: number, max: number): boolean {
  return length / 2 + 1 > max;
}

/** Index of the quote that closes the string opening at `open`, -1 when there is none. */
function stringEnd(text: string, open: number): number {
  let end = text.indexOf('"', open + 1);
  while (end > 0 && escapedAt(text, end)) end = text.indexOf('"', end + 1);
  return end;
}

/** Whether the quote at `at` is preceded by an odd number of backslashes. */
export function escapedAt(text: string, at: number): boolean {
  let k = at - 1;
  while (text.charCodeAt(k) === 0x5c) k--;
  return ((at - 1 - k) & 1) === 1;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * The number of JSON values in a parsed value (as countJsonValues would count its JSON text),
 * or the first count past `max`. Iterative: no depth can overflow the stack.
 */
export function countValues(root: unknown, max = Infinity): number {
  let n = 0;
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (++n > max) return n;
    if (typeof node !== 'object' || node === null) continue;
    if (Array.isArray(node)) {
      for (const item of node) {
        if (typeof item === 'object' && item !== null) stack.push(item);
        else if (++n > max) return n;
      }
    } else {
      for (const key of Object.keys(node)) {
        const child = (node as Record<string, unknown>)[key];
        if (typeof child === 'object' && child !== null) stack.push(child);
        else if (child !== undefined && ++n > max) return n;
      }
    }
  }
  return n;
}
