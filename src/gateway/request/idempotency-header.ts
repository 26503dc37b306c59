/**
 * The `Idempotency-Key` request header (IETF draft-ietf-httpapi-idempotency-key-header): a
 * structured-field string, or a bare token, of visible ASCII, sent once.
 */

/** Longest key, in characters. */
export const MAX_KEY_LENGTH = 255;

/** Visible ASCII and space: what an sf-string may hold. */
const KEY_CHARS = /^[\x20-\x7E]+$/;

const REPEATED = { invalid: 'the request has more than one Idempotency-Key header' };

/**
 * Whether a header line comes more than once in `rawHeaders` (name, value, name, value, ...).
 * Node joins repeated unknown headers into one value (`a, b`), which would pass as a key.
 */
export function headerRepeated(rawHeaders: readonly string[], lowerName: string): boolean {
  let seen = false;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length !== lowerName.length || name.toLowerCase() !== lowerName) continue;
    if (seen) return true;
    seen = true;
  }
  return false;
}

/**
 * The key of a request: undefined when it has none, `{ invalid }` (saying why) when the header is
 * malformed or comes twice (`rawHeaders`, when given, tells: Node has joined the copies by then).
 */
export function parseIdempotencyKey(
  header: string | string[] | undefined,
  rawHeaders?: readonly string[],
): string | undefined | { invalid: string } {
  if (header === undefined) return undefined;
  if (Array.isArray(header)) return REPEATED;
  if (rawHeaders !== undefined && headerRepeated(rawHeaders, 'idempotency-key')) return REPEATED;
  let key = header;
  // The draft defines the field as a structured-field string ("..."); a bare token is accepted too.
  if (key.length >= 2 && key.startsWith('"') && key.endsWith('"')) {
    key = key.slice(1, -1);
    if (/(?:^|[^\\])"/.test(key)) return { invalid: 'the Idempotency-Key is not a valid string' };
    key = key.replace(/\\(["\\])/g, '$1');
  }
  if (key === '') return { invalid: 'the Idempotency-Key is empty' };
  if (key.length > MAX_KEY_LENGTH)
    return { invalid: `the Idempotency-Key is longer than ${MAX_KEY_LENGTH} characters` };
  if (!KEY_CHARS.test(key)) return { invalid: 'the Idempotency-Key holds characters other than visible ASCII' };
  return key;
}
