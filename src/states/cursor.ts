import { SagawayError } from '../core/errors.js';

/**
 * Paging cursors of list(). A cursor is keyset, not an offset: it holds the sort key and the id
 * (or the insertion sequence) of the last record of a page, and the next page starts strictly
 * after that position. Records inserted or deleted while a client pages therefore never shift
 * the pages: nothing is repeated, and a record inserted after the cursor's position shows up on
 * a later page. The sort the cursor was made for is part of it, so that a cursor is never
 * applied to another order. The token is base64url JSON: opaque to clients, not a secret (the
 * gateway signs what it hands to stream clients).
 */

/** The position after which the next page starts. */
export interface CursorPosition {
  /** the sort the cursor belongs to ('' = insertion order, else `field` or `-field`) */
  sort: string;
  /** the sort value of the last record (insertion order: its sequence number) */
  key: string | number | boolean | null;
  /** the id of the last record (tie-break for equal sort values) */
  id: string;
}

/** Longest cursor accepted: a cursor only carries one sort value and one id. */
export const MAX_CURSOR_LENGTH = 4096;

/** Encode a position as an opaque token. */
export function encodeCursor(position: CursorPosition): string {
  return Buffer.from(JSON.stringify([position.sort, position.key, position.id]), 'utf8').toString('base64url');
}

function invalid(): SagawayError {
  return new SagawayError('INVALID_CURSOR', 'the paging cursor is not valid for this list');
}

/** Decode a token made by encodeCursor for the same sort; INVALID_CURSOR otherwise. */
export function decodeCursor(token: string, sort: string): CursorPosition {
  if (typeof token !== 'string' || token.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(token)) throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(parsed) || parsed.length !== 3) throw invalid();
  const [s, key, id] = parsed as unknown[];
  if (s !== sort || typeof id !== 'string') throw invalid();
  if (key !== null && !['string', 'number', 'boolean'].includes(typeof key)) throw invalid();
  if (sort === '' && (typeof key !== 'number' || !Number.isSafeInteger(key))) throw invalid();
  return { sort, key: key as CursorPosition['key'], id };
}

/**
 * The `next` of a page (the same rule for every state): the position after the page's last
 * record while more records follow, or always with `follow`; an empty page with `follow` keeps
 * the position it started from.
 */
export function nextOf(
  o: { sortKey: string; follow: boolean; after: string | undefined },
  more: boolean,
  last: { key: CursorPosition['key']; id: string } | undefined,
): string | undefined {
  if (last && (more || o.follow)) return encodeCursor({ sort: o.sortKey, key: last.key, id: last.id });
  return o.follow ? o.after : undefined;
}

/**
 * A cursor positioned at a record of a list sorted by `sort` (`field` or `-field`) whose sort
 * value is the number `value`: the next page starts after (value, id). For a reader that merges
 * the pages of several lists (or starts a list at a bound) and must resume each at a record of
 * its choosing; PostgreSQL carries the key as its JSON text (postgres.ts list).
 */
export function cursorAt(kind: 'memory' | 'sqlite' | 'postgres', sort: string, value: number, id: string): string {
  return encodeCursor({ sort, key: kind === 'postgres' ? JSON.stringify(value) : value, id });
}
