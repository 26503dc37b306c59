/** Text format (DESIGN §8): the response's `plain` field. */

/** Media type of the text format. */
export const TEXT_TYPE = 'text/plain; charset=utf-8';

/** The `plain` string of a response, or undefined when it has none (406). */
export function toText(response: unknown): string | undefined {
  if (typeof response !== 'object' || response === null || Array.isArray(response)) return undefined;
  const plain = (response as Record<string, unknown>)['plain'];
  return typeof plain === 'string' ? plain : undefined;
}
