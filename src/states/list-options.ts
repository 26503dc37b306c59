import { SagawayError } from '../core/errors.js';
import type { ListOptions } from './state.js';

/**
 * Validation of list() options shared by every state: limits clamped, field names checked
 * against a strict identifier pattern (they end up in SQL as JSON paths), filter values scalar.
 */

/** Default page size (DESIGN §6.8). */
export const DEFAULT_LIMIT = 100;
/** Largest page size; larger limits are clamped. */
export const MAX_LIMIT = 1000;
export { DEFAULT_MAX_PAGE_BYTES } from '../config/settings.js';
/** Largest `skip`: deeper offsets are what cursors are for. */
export const MAX_SKIP = 100_000;

/** Field names that may be filtered or sorted on. */
export const FIELD_RE = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** A scalar a filter may compare with. */
export type FilterValue = string | number | boolean | null;

/** list() options after validation. `field` undefined = insertion order. */
export interface NormalizedList {
  filter: [field: string, value: FilterValue][];
  field: string | undefined;
  desc: boolean;
  /** the sort as written, bound into cursors so that a cursor is not reused with another sort */
  sortKey: string;
  limit: number;
  skip: number;
  after: string | undefined;
  follow: boolean;
}

function invalid(message: string): SagawayError {
  return new SagawayError('VALIDATION_FAILED', message);
}

/** Validate and default list() options; VALIDATION_FAILED for bad fields or values. */
export function normalizeList(options: ListOptions = {}): NormalizedList {
  const filter: [string, FilterValue][] = [];
  if (options.filter !== undefined) {
    if (typeof options.filter !== 'object' || options.filter === null || Array.isArray(options.filter)) {
      throw invalid('filter must be an object');
    }
    for (const [key, value] of Object.entries(options.filter)) {
      if (!FIELD_RE.test(key)) throw invalid(`filter field "${key.slice(0, 64)}" is not a valid field name`);
      if (value !== null && !['string', 'number', 'boolean'].includes(typeof value)) {
        throw invalid(`filter value of "${key}" must be a string, number, boolean or null`);
      }
      if (typeof value === 'number' && !Number.isFinite(value)) throw invalid(`filter value of "${key}" is not finite`);
      filter.push([key, value as FilterValue]);
    }
  }
  let field: string | undefined;
  let desc = false;
  if (options.sort !== undefined && options.sort !== '') {
    if (typeof options.sort !== 'string') throw invalid('sort must be a string');
    desc = options.sort.startsWith('-');
    field = desc ? options.sort.slice(1) : options.sort.startsWith('+') ? options.sort.slice(1) : options.sort;
    if (!FIELD_RE.test(field)) throw invalid(`sort field "${field.slice(0, 64)}" is not a valid field name`);
  }
  const limit = toCount(options.limit, 'limit', DEFAULT_LIMIT);
  const skip = toCount(options.skip, 'skip', 0);
  if (skip > MAX_SKIP) throw invalid(`skip must be at most ${MAX_SKIP}; page with the cursor instead`);
  const after =
    options.after === undefined || options.after === null || options.after === '' ? undefined : options.after;
  if (after !== undefined && typeof after !== 'string') throw invalid('the cursor must be a string');
  return {
    filter,
    field,
    desc,
    sortKey: field === undefined ? '' : (desc ? '-' : '') + field,
    limit: Math.min(Math.max(limit, 1), MAX_LIMIT),
    skip,
    after,
    follow: options.follow === true,
  };
}

function toCount(value: unknown, name: string, fallback: number): number {
  if (value === undefined || value === null || value === '') return fallback;
  const n = typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0)
    throw invalid(`${name} must be a non-negative integer`);
  return n;
}
