import type { Cancellable } from '../core/cancel.js';
import { ERROR_CODES, isKnownCode } from '../core/errors.js';
import type { EventReply } from '../core/messages.js';
import { parseDuration } from '../core/units.js';
import type { RawRetry } from './schema.js';

/**
 * Retries of an event step (issue 12): which failed tries are tried again, and how long to wait
 * before the next one. The clock is injected so that tests can check the spacing without waiting.
 */

/** Time as the engine sees it between tries. */
export interface EngineClock {
  now(): number;
  /** resolve after `ms`, or at once when `cancel` aborts */
  sleep(ms: number, cancel: Cancellable): Promise<void>;
  /** a number in [0, 1) for full jitter */
  random(): number;
}

/** The real clock. */
export const realClock: EngineClock = {
  now: () => Date.now(),
  random: () => Math.random(),
  sleep: (ms, cancel) =>
    new Promise<void>((resolve) => {
      if (cancel.aborted) return resolve();
      const unlink = cancel.onAbort(() => {
        clearTimeout(timer);
        resolve();
      });
      const timer = setTimeout(() => {
        unlink();
        resolve();
      }, ms);
    }),
};

/**
 * The delay before try `tried + 1`, after `tried` tries: min(maxBackoff, backoff × 2^(tried-1)),
 * or a random delay between 0 and that with full jitter (AWS's "full jitter": spreads the tries
 * of many runs that failed together).
 */
export function backoffDelay(plan: RetryPlan, tried: number, random: () => number): number {
  const ceiling = Math.min(plan.maxBackoffMs, plan.backoffMs * 2 ** Math.min(tried - 1, 52));
  return plan.jitter ? Math.floor(random() * ceiling) : ceiling;
}

/** The error code of a failed reply: its own, else EVENT_TIMEOUT for a TIMEOUT, else ACTION_FAILED. */
export function replyCode(reply: EventReply): string {
  return reply.error?.code ?? (reply.status === 'TIMEOUT' ? 'EVENT_TIMEOUT' : 'ACTION_FAILED');
}

/**
 * Whether a failed reply is tried again: its status or code is in `on`; without `on`, its code
 * is one that docs/errors.md marks retryable (a property of the error type, never of the call).
 */
export function isRetried(plan: RetryPlan, reply: EventReply): boolean {
  if (reply.status === 'SUCCESS' || reply.status === 'ACK') return false;
  const code = replyCode(reply);
  if (plan.on) return plan.on.has(reply.status) || plan.on.has(code);
  return isKnownCode(code) && ERROR_CODES[code].retryable;
}

/** An event step's `retry`, durations in ms and `on` as a set (undefined = the retryable codes). */
export interface RetryPlan {
  readonly attempts: number;
  readonly backoffMs: number;
  readonly maxBackoffMs: number;
  readonly jitter: boolean;
  readonly on: ReadonlySet<string> | undefined;
  /** runs (issue 22): what a failure after the last try does: fail (default), or suspend the run */
  readonly onExhausted: 'fail' | 'suspend';
}

/** A `retry` with its defaults filled (backoff 100 ms, maxBackoff 10 s, jitter on). */
export function planRetry(raw: RawRetry): RetryPlan {
  return Object.freeze({
    attempts: raw.attempts,
    backoffMs: parseDuration(raw.backoff) ?? 100,
    maxBackoffMs: parseDuration(raw.maxBackoff) ?? 10_000,
    jitter: raw.jitter ?? true,
    on: raw.on ? new Set(raw.on) : undefined,
    onExhausted: raw.onExhausted ?? 'fail',
  });
}
