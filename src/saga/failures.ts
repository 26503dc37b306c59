import { httpFor, type ErrorInfo } from '../core/errors.js';
import type { SagaResult } from '../core/types.js';
import type { CompiledSaga, FailStep } from './graph.js';

/**
 * The FAIL and TIMEOUT results a run ends with (engine.ts): a failed step or `fail` step, the
 * saga's deadline, a caller that went away. One place, so that every end carries the saga id,
 * the run id and an HTTP status the same way.
 */

/** Why the engine aborted a run: its deadline passed (TIMEOUT, 504). */
export const TIMED_OUT = Symbol('saga timeout');
/** Why the engine aborted a run: its caller went away (499). */
export const CALLER_GONE = Symbol('caller gone');

/** A `fail` step's error: its own `error`, else the last step error, else SAGA_FAILED. */
export function failStepError(step: FailStep, last: ErrorInfo | undefined): ErrorInfo {
  const own = step.error;
  if (!own?.code && last) {
    return { ...last, ...(own?.message ? { message: own.message } : {}), ...(own?.http ? { http: own.http } : {}) };
  }
  const code = own?.code ?? 'SAGA_FAILED';
  return { code, message: own?.message ?? 'the saga failed', http: own?.http ?? httpFor(code), step: step.id };
}

/** The FAIL result of a run with `error`. */
export function failed(saga: CompiledSaga, runId: string, error: ErrorInfo): SagaResult {
  return { outcome: 'FAIL', http: error.http ?? httpFor(error.code), error, sagaId: saga.id, runId };
}

/** The result of a run aborted for `reason` (TIMED_OUT or CALLER_GONE). */
export function abortedResult(saga: CompiledSaga, runId: string, reason: unknown): SagaResult {
  if (reason === CALLER_GONE) {
    return {
      outcome: 'FAIL',
      http: 499,
      error: { code: 'REQUEST_ABORTED', message: 'the caller went away', http: 499 },
      sagaId: saga.id,
      runId,
    };
  }
  return {
    outcome: 'TIMEOUT',
    http: 504,
    error: { code: 'SAGA_TIMEOUT', message: `saga "${saga.id}" did not end within its timeout`, http: 504 },
    sagaId: saga.id,
    runId,
  };
}
