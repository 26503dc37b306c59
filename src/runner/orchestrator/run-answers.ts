import { SagawayError, toErrorInfo } from '../../core/errors.js';
import { roleRefusal, roleRefusalDetail } from '../../core/roles.js';
import type { Principal, SagaResult } from '../../core/types.js';
import type { CompiledSaga } from '../../saga/graph.js';

/**
 * The answers a runner gives in place of a saga's own result: no such saga, a refused caller, an
 * outcome the journal did not take. Each is a FAIL result with a stable code, never a throw, so
 * that the gateway maps them like any other outcome.
 */

/** A saga's roles against the caller (gateway requests and saga.StartSaga alike): 401, 403 or undefined. */
export function authorize(saga: CompiledSaga, user: Principal | null): SagaResult | undefined {
  return refusal(roleRefusal(saga.roles, user), saga.roles);
}

/** The answer to a refused caller (undefined: not refused), naming the roles that would do. */
export function refusal(
  code: 'UNAUTHORIZED' | 'FORBIDDEN' | undefined,
  roles: readonly string[],
): SagaResult | undefined {
  if (code === undefined) return undefined;
  return reject(code, roles.length > 0 ? roleRefusalDetail(code, roles) : 'authentication required');
}

/**
 * The answer of a run whose outcome the journal did not take: 503, marked `ran: unknown` so that
 * the gateway keeps an Idempotency-Key bound to the run (its outcome is read from the journal).
 */
export function unrecorded(why: 'taken-over' | 'retrying'): SagaResult {
  const error =
    why === 'retrying'
      ? toErrorInfo(
          new SagawayError(
            'STATE_UNAVAILABLE',
            'the outcome of the saga run could not be recorded; it is written when the journal is back, and can then be read at /api/status/<requestId>',
          ),
        )
      : toErrorInfo(
          new SagawayError(
            'RUNNER_UNAVAILABLE',
            'this saga run was taken over by another runner; its outcome will be at /api/status/<requestId>',
          ),
        );
  return { outcome: 'FAIL', http: 503, error, ran: 'unknown' };
}

/** A FAIL result with `code` and its HTTP status. */
export function reject(code: string, message: string): SagaResult {
  const error = toErrorInfo(new SagawayError(code, message));
  return { outcome: 'FAIL', http: error.http ?? 500, error };
}
