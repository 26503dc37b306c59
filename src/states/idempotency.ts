import * as crypto from 'node:crypto';
import type { StateRecord } from './state.js';

/**
 * What a state remembers of a write applied with an idempotency key, and for how long.
 *
 * A key row holds the key, the record id, the version the write produced and a hash of the
 * data it left (none for a delete): about 150 bytes, whatever the record's size. It used to hold
 * a full copy of the result, so 30 identical 1 MB PATCHes kept 30 MB for a day.
 *
 * Redelivery (the same key again) applies nothing and answers from the record itself: when the
 * record is still at that version with that hash, the answer is the record read back, equal to
 * the first answer; when it has changed since (a later write, a delete, a re-create) the data
 * of that moment is gone, and the answer is `{ id, version, data: {} }` — the write it reports
 * is the same, its data is not repeated. The effect is applied once either way.
 *
 * Keys are pruned by age in bounded batches (never one unbounded DELETE on a write's path), and
 * a state holds at most `maxKeys` of them: past that the oldest go first, even when younger
 * than the retention (at the default, a million keyed writes must happen within the window
 * before that matters, and redeliveries come within minutes).
 */

/** How keys are kept; every field has a default (DEFAULT_IDEMPOTENCY). */
export interface IdempotencyLimits {
  /** how long an applied key is remembered; default 24 h */
  retentionMs: number;
  /** most keys kept per state; default 1,000,000 (SQL), 100,000 (memory) */
  maxKeys: number;
  /** keys removed by one pruning pass at most; default 1000 */
  pruneBatch: number;
  /** keyed writes between two pruning passes; default 500 (half a batch, so pruning keeps up) */
  pruneEvery: number;
}

/** The defaults of the SQL states. */
export const DEFAULT_IDEMPOTENCY: Readonly<IdempotencyLimits> = Object.freeze({
  retentionMs: 24 * 60 * 60 * 1000,
  maxKeys: 1_000_000,
  pruneBatch: 1000,
  pruneEvery: 500,
});

/** The defaults of the memory state: its keys live on the heap, and die with the process anyway. */
export const DEFAULT_MEMORY_IDEMPOTENCY: Readonly<IdempotencyLimits> = Object.freeze({
  ...DEFAULT_IDEMPOTENCY,
  maxKeys: 100_000,
});

/** The limits with defaults filled in. */
export function idempotencyLimits(
  given: Partial<IdempotencyLimits> | undefined,
  defaults: Readonly<IdempotencyLimits> = DEFAULT_IDEMPOTENCY,
): IdempotencyLimits {
  return { ...defaults, ...given };
}

/** The hash of a record's data as stored (its JSON text), kept instead of the data. */
export function dataHash(json: string): string {
  return oneShotHash
    ? oneShotHash('sha256', json, 'base64url')
    : crypto.createHash('sha256').update(json).digest('base64url');
}

// crypto.hash (Node 20.12+, 21.7+) skips the Hash object: half the cost on the small records of a write
const oneShotHash = (crypto as { hash?: (algorithm: string, data: string, encoding: 'base64url') => string }).hash;

/** The answer to a redelivery when the record no longer holds what the first delivery wrote. */
export function appliedElsewhere(id: string, version: number): StateRecord {
  return { id, version, data: {} };
}
