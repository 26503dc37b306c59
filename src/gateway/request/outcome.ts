import type { SagaResult } from '../../core/types.js';
import { toProblem, type Problem } from '../http/helpers/problem.js';

/**
 * The HTTP outcome of a saga (DESIGN §5): SUCCESS is the result's status (200 unless the
 * `success` step set one), ACK is 202, FAIL is the error's status as a problem, TIMEOUT is 504
 * SAGA_TIMEOUT.
 */

/** Status of a successful (SUCCESS or ACK) result. */
export function successStatus(result: SagaResult): number {
  // waits: a parked run; runs: a suspended one (its outcome comes after a redrive or abort)
  if (result.outcome === 'ACK' || result.outcome === 'WAITING' || result.outcome === 'SUSPENDED') return 202;
  const http = result.http;
  return Number.isInteger(http) && http >= 200 && http < 300 ? http : 200;
}

/** The problem of a FAIL or TIMEOUT result. */
export function failureProblem(result: SagaResult, requestId: string): Problem {
  if (result.outcome === 'TIMEOUT') {
    const error = result.error ?? { code: 'SAGA_TIMEOUT', message: 'the saga did not finish in time' };
    return toProblem(error, requestId, 504);
  }
  const error = result.error ?? { code: 'SAGA_FAILED', message: 'the saga failed' };
  const status = error.http ?? (result.http >= 400 && result.http <= 599 ? result.http : undefined);
  return toProblem(error, requestId, status);
}
