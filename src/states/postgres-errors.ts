import { SagawayError } from '../core/errors.js';

/**
 * What a `pg` error means for a caller: the server cannot be reached (STATE_UNAVAILABLE, 503,
 * retryable), a value the database refused (VALIDATION_FAILED, 400), or anything else (INTERNAL,
 * details only in the cause, never in the message).
 */

/** SQLSTATE classes and Node error codes that mean "cannot reach the server". */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '57014',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
]);

/** Whether an error from pg means the server could not be reached (as opposed to a bad query). */
export function isUnavailable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
  const message = (err as { message?: unknown }).message;
  return (
    typeof message === 'string' &&
    /Connection terminated|connection error|timeout exceeded when trying to connect|Client was closed|not queryable/i.test(
      message,
    )
  );
}

/** Map an error from pg to the state's coded error. */
export function toStateError(alias: string, err: unknown): SagawayError {
  if (err instanceof SagawayError) return err;
  if (isUnavailable(err)) {
    return new SagawayError('STATE_UNAVAILABLE', `state "${alias}" is not available`, { cause: err });
  }
  const sqlstate = (err as { code?: unknown } | undefined)?.code;
  // class 22 = data exception, e.g. a \u0000 character, which jsonb cannot hold
  if (typeof sqlstate === 'string' && sqlstate.startsWith('22')) {
    return new SagawayError('VALIDATION_FAILED', `state "${alias}": the database refused a value`, { cause: err });
  }
  return new SagawayError('INTERNAL', `state "${alias}": database error`, { cause: err });
}
