import { AsyncLocalStorage } from 'node:async_hooks';
import { SagawayError } from '../core/errors.js';

/**
 * A guard against endless nesting: an action record whose event calls action.TakeAction on
 * itself, or a saga that starts itself through saga.StartSaga. The depth travels with the async
 * call chain (in one process); past MAX_NESTING the call fails instead of recursing until memory
 * runs out. Across processes (NATS) the saga timeout is what ends such a loop.
 */

/** Nested TakeAction / StartSaga calls allowed inside one another. */
export const MAX_NESTING = 8;

const depth = new AsyncLocalStorage<number>();

/** Run `fn` one level deeper; STEP_LIMIT_EXCEEDED past MAX_NESTING. */
export function nested<T>(what: string, fn: () => Promise<T>): Promise<T> {
  const level = (depth.getStore() ?? 0) + 1;
  if (level > MAX_NESTING) {
    return Promise.reject(
      new SagawayError('STEP_LIMIT_EXCEEDED', `${what} nested more than ${MAX_NESTING} levels deep`),
    );
  }
  return depth.run(level, fn);
}
