import { SagawayError } from '../core/errors.js';
import { compileSagaPlan } from '../saga/compile.js';
import type { CompiledSaga } from '../saga/graph.js';
import type { RawSaga } from '../saga/schema.js';

/** The plan of a saga for tests of the engine; throws CONFIG_INVALID when the compile pass reports an error. */
export function compileSaga(saga: RawSaga, defaultTimeoutMs: number): CompiledSaga {
  const { plan, issues } = compileSagaPlan(saga, defaultTimeoutMs);
  if (plan) return plan;
  const errors = issues.filter((i) => i.severity === 'error');
  throw new SagawayError(
    'CONFIG_INVALID',
    `saga "${saga.id}": ${errors.map((e) => `${e.at.join('.')}: ${e.message}`).join('; ')}`,
  );
}
