import { overBudget, TOO_LARGE } from './budget.js';

/** JSON, the default format. */

/** Media type of the JSON format. */
export const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Serialise a response as JSON (`{}` when the saga returned nothing). The text is measured once
 * and sent as it is: TOO_LARGE past `max` bytes, or when it is too long for a string at all.
 */
export function toJson(response: unknown, max = Infinity): string | typeof TOO_LARGE {
  let body: string;
  try {
    body = JSON.stringify(response ?? {});
  } catch (err) {
    // V8's "Invalid string length": a response larger than any string can hold
    if (err instanceof RangeError) return TOO_LARGE;
    throw err;
  }
  return overBudget(body, max) ? TOO_LARGE : body;
}
