import type { RawSaga, RawStep } from './schema.js';
import type { Expression } from './expression.js';
import { checkSaga, planSaga, type CompiledSaga, type SagaIssue } from './graph.js';

/** A saga's issues and, when none of them is an error, its plan: what one compile pass gives. */
export interface SagaCompilation {
  readonly plan: CompiledSaga | undefined;
  readonly issues: readonly SagaIssue[];
}

/**
 * The compile pass of one saga (the configuration loader's, `sagaway validate`'s): every issue
 * with its location, and the frozen plan of a saga without errors. Each expression is compiled
 * once, by the check, and the plan takes it from there (paths are parsed through a cache).
 */
export function compileSagaPlan(saga: RawSaga, defaultTimeoutMs: number): SagaCompilation {
  const expressions = new Map<RawStep, Expression>();
  const issues = checkSaga(saga, expressions);
  const plan = issues.some((i) => i.severity === 'error') ? undefined : planSaga(saga, defaultTimeoutMs, expressions);
  return { plan, issues };
}
