import { overBudget, TOO_LARGE } from './budget.js';

/** Text format (DESIGN §8): the response's `plain` field. */

/** Media type of the text format. */
export const TEXT_TYPE = 'text/plain; charset=utf-8';

/** The `plain` string of a response: undefined when it has none (406), TOO_LARGE past `max` bytes. */
export function toText(response: unknown, max = Infinity): string | typeof TOO_LARGE | undefined {
  if (typeof response !== 'object' || response === null || Array.isArray(response)) return undefined;
  const plain = (response as Record<string, unknown>)['plain'];
  if (typeof plain !== 'string') return undefined;
  return overBudget(plain, max) ? TOO_LARGE : plain;
}
