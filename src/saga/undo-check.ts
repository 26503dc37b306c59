import { parseDuration } from '../core/units.js';
import { planRetry } from './retry.js';
import type { RawStep } from './schema.js';

/**
 * The checks of a step's undo settings (issue 12: compensation, pivot, retry), part of the saga
 * checks of graph.ts: which step kinds may carry them, and the timers they set.
 */

/** Which step kinds may carry the settings of issue 12 (compensation, pivot, retry). */
export function checkUndoSettings(step: RawStep, i: number, err: (at: (string | number)[], m: string) => void): void {
  if (step.compensate === false && step.type !== 'fail')
    err(['steps', i, 'compensate'], 'only a fail step may say compensate: false');
  if (typeof step.compensate === 'object' && step.type !== 'event')
    err(['steps', i, 'compensate'], 'only an event step has a compensation');
  if (step.pivot !== undefined && step.type !== 'event') err(['steps', i, 'pivot'], 'a pivot is an event step');
  if (step.pivot === true && typeof step.compensate === 'object')
    err(['steps', i, 'compensate'], 'a pivot cannot be undone: it has no compensation');
  if (step.retry !== undefined && step.type !== 'event') err(['steps', i, 'retry'], 'only an event step retries');
  for (const [retry, at] of [
    [step.retry, ['steps', i, 'retry']],
    [typeof step.compensate === 'object' ? step.compensate.retry : undefined, ['steps', i, 'compensate', 'retry']],
  ] as const) {
    if (!retry) continue;
    const { backoffMs, maxBackoffMs } = planRetry(retry);
    if (maxBackoffMs < backoffMs) err([...at, 'maxBackoff'], 'maxBackoff is shorter than backoff');
    for (const key of ['backoff', 'maxBackoff'] as const) checkTimer(retry[key], [...at, key], err);
  }
}

/** The longest delay a Node.js timer keeps (2^31 - 1 ms, about 24.8 days). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A duration the engine waits with a timer (saga and step timeouts, retry delays): Node.js runs
 * a timer longer than MAX_TIMER_MS after 1 ms instead, so such a saga would time out at once,
 * its unwind would be cut at once and its retries would not wait.
 */
export function checkTimer(
  value: unknown,
  at: (string | number)[],
  err: (at: (string | number)[], m: string) => void,
): void {
  if ((parseDuration(value) ?? 0) > MAX_TIMER_MS) err(at, 'longer than 24 days (the longest timer Node.js keeps)');
}
