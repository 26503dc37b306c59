import { SagawayError } from '../core/errors.js';
import { countJsonValues, DEFAULT_MAX_RECORD_VALUES, mayExceedValues } from '../core/json-values.js';
import { isForbiddenKey } from '../core/path.js';
import type { StateRecord, WriteOptions } from './state.js';

/**
 * The rules of a write, shared by every state so that they behave the same: given the stored
 * record (or none), decide what to store or fail with the contract's code. Each store applies
 * the plan atomically in its own way (a Map, a SQLite transaction, a PostgreSQL transaction with
 * the row locked).
 */

/** The five writes of the contract. */
export type WriteOp = 'create' | 'update' | 'set' | 'upsert' | 'delete';

/** What to do with the row. */
export type WritePlan =
  | { kind: 'insert'; record: StateRecord }
  | { kind: 'update'; record: StateRecord }
  | { kind: 'delete'; record: StateRecord };

/** Largest record data, as JSON text. */
export const MAX_DATA_BYTES = 1024 * 1024;
/** Longest record id. */
export const MAX_ID_LENGTH = 256;

/** Check an id; VALIDATION_FAILED when it is empty or too long. */
export function checkId(id: unknown): string {
  if (typeof id !== 'string' || id === '' || id.length > MAX_ID_LENGTH) {
    throw new SagawayError('VALIDATION_FAILED', `a record id must be a string of 1 to ${MAX_ID_LENGTH} characters`);
  }
  return id;
}

/**
 * Serialise data, refusing what is not an object, over the size limit or over `maxValues` JSON
 * values (`states.<alias>.maxValues`: what one record costs every later read, list and response).
 */
export function dataJson(data: unknown, maxValues = DEFAULT_MAX_RECORD_VALUES): string {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new SagawayError('VALIDATION_FAILED', 'record data must be an object');
  }
  const json = JSON.stringify(data);
  // length counts UTF-16 units; a byte count would be up to 3x this, close enough for a cap
  if (json.length > MAX_DATA_BYTES) {
    throw new SagawayError('PAYLOAD_TOO_LARGE', `record data is larger than ${MAX_DATA_BYTES} bytes`);
  }
  checkDataValues(json, maxValues);
  return json;
}

/** TOO_MANY_VALUES when a record's JSON text holds more than `maxValues` values (also after a merge). */
export function checkDataValues(json: string, maxValues: number): void {
  if (mayExceedValues(json.length, maxValues) && countJsonValues(json, maxValues) > maxValues) {
    throw new SagawayError('TOO_MANY_VALUES', `record data holds more than ${maxValues} JSON values`);
  }
}

/** The JSON text of a record's data after a patch was merged into it: the merge may pass `maxValues`. */
export function mergedJson(data: Record<string, unknown>, maxValues: number): string {
  const json = JSON.stringify(data);
  checkDataValues(json, maxValues);
  return json;
}

/** Shallow merge of a patch, skipping keys that would reach a prototype. */
export function mergePatch(base: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(base)) out[key] = base[key];
  for (const key of Object.keys(patch)) if (!isForbiddenKey(key)) out[key] = patch[key];
  return out;
}

/** VALIDATION_FAILED unless an expected version is absent or a non-negative integer. */
export function checkExpected(expected: number | undefined): void {
  if (expected !== undefined && (!Number.isSafeInteger(expected) || expected < 0)) {
    throw new SagawayError('VALIDATION_FAILED', 'the expected version must be a non-negative integer');
  }
}

/** Decide a write. `data` is the new data (create/set/upsert) or the patch (update). */
export function planWrite(
  op: WriteOp,
  id: string,
  current: StateRecord | undefined,
  data: Record<string, unknown> | undefined,
  options: WriteOptions | undefined,
): WritePlan {
  const expected = options?.expectedVersion;
  checkExpected(expected);
  if (op === 'create') {
    if (current) throw new SagawayError('RECORD_EXISTS', 'record already exists');
    return { kind: 'insert', record: { id, version: 1, data: data ?? {} } };
  }
  if (!current) {
    if (op === 'upsert' && expected === undefined)
      return { kind: 'insert', record: { id, version: 1, data: data ?? {} } };
    // an upsert that names a version expects the record to exist at that version
    if (op === 'upsert') throw stale(expected as number, 0);
    throw new SagawayError('RECORD_NOT_FOUND', 'record not found');
  }
  if (expected !== undefined && expected !== current.version) throw stale(expected, current.version);
  if (op === 'delete') return { kind: 'delete', record: current };
  const next = op === 'update' ? mergePatch(current.data, data ?? {}) : (data ?? {});
  return { kind: 'update', record: { id, version: current.version + 1, data: next } };
}

/** The STALE_VERSION error of a write that expected `expected` and found `actual` (0: no record). */
export function stale(expected: number, actual: number): SagawayError {
  // No id in the detail: it is the caller's text (issue 9, item 9).
  return new SagawayError(
    'STALE_VERSION',
    `the record is at version ${actual === 0 ? '(none)' : actual}, not ${expected}`,
  );
}
