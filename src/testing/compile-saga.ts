import { SagawayError } from '../core/errors.js';
import { checkSaga, planSaga, type CompiledSaga } from '../saga/graph.js';
import type { RawSaga } from '../saga/schema.js';

/**
 * A saga compiled on its own, for tests of the saga engine: the configuration's compile stage
 * (config/compile.ts) checks and plans every saga of a runner; a test has one saga and no runner.
 * Throws CONFIG_INVALID when `checkSaga` reports an error.
 */
export function compileSaga(saga: RawSaga, defaultTimeoutMs: number): CompiledSaga {
  const errors = checkSaga(saga).filter((i) => i.severity === 'error');
  if (errors.length > 0) {
    throw new SagawayError(
      'CONFIG_INVALID',
      `saga "${saga.id}": ${errors.map((e) => `${e.at.join('.')}: ${e.message}`).join('; ')}`,
    );
  }
  return planSaga(saga, defaultTimeoutMs);
}
