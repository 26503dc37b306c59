/** JSON, the default format. */

/** Media type of the JSON format. */
export const JSON_TYPE = 'application/json; charset=utf-8';

/** Serialise a response as JSON (`{}` when the saga returned nothing). */
export function toJson(response: unknown): string {
  return JSON.stringify(response ?? {});
}
