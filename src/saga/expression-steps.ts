import type { Cancellable } from '../core/cancel.js';
import { SagawayError, type ErrorInfo } from '../core/errors.js';
import { isObject } from '../core/path.js';
import type { Payload, RequestContext } from '../core/types.js';
import { conditionValue } from './expression.js';
import type { CompiledStep, ConditionStep, TransformStep } from './graph.js';
import { writeOutput } from './payload.js';

/** The transform and condition steps of the engine (engine.ts runStep). */

/** How a step that does not end the run ended (engine.ts StepOutcome). */
export interface StepOutcome {
  value: string;
  error?: ErrorInfo;
}

/** What these steps read and write of a run's state. */
interface ExpressionState {
  payload: Payload;
  context: RequestContext;
}

// A transform or condition whose expression has a direct form (expression-direct.ts) ends
// without a promise; only one that JSONata evaluates awaits.
export function conditionStep(
  scope: { cancel: Cancellable },
  step: ConditionStep,
  state: ExpressionState,
): StepOutcome | Promise<StepOutcome> {
  let value: unknown;
  try {
    value = step.expression.evaluateNow(state.payload, state.context);
  } catch (e) {
    return conditionFailed(scope, step, e);
  }
  if (!(value instanceof Promise)) return { value: conditionValue(value) };
  return value.then(
    (v) => ({ value: conditionValue(v) }),
    (e) => conditionFailed(scope, step, e),
  );
}

function conditionFailed(scope: { cancel: Cancellable }, step: ConditionStep, e: unknown): StepOutcome {
  if (scope.cancel.aborted) throw e;
  return { value: 'FAIL', error: expressionError('EXPRESSION_FAILED', step, e) };
}

export function transformStep(
  scope: { cancel: Cancellable },
  step: TransformStep,
  state: ExpressionState,
): StepOutcome | Promise<StepOutcome> {
  let result: unknown;
  try {
    result = step.expression.evaluateNow(state.payload, state.context);
    if (!(result instanceof Promise)) return transformed(step, state, result);
  } catch (e) {
    return transformFailed(scope, step, e);
  }
  return result.then((r) => transformed(step, state, r)).catch((e: unknown) => transformFailed(scope, step, e));
}

function transformed(step: TransformStep, state: ExpressionState, result: unknown): StepOutcome {
  state.payload = step.output ? writeOutput(state.payload, result, step.output, []) : replaceWith(result);
  return TRANSFORMED;
}

function transformFailed(scope: { cancel: Cancellable }, step: TransformStep, e: unknown): StepOutcome {
  if (scope.cancel.aborted) throw e;
  // Our own errors (OUTPUT_NOT_OBJECT, path conflicts) keep their code; JSONata's become TRANSFORM_FAILED.
  const error =
    e instanceof SagawayError ? { ...e.toInfo(), step: step.id } : expressionError('TRANSFORM_FAILED', step, e);
  return { value: 'FAIL', error };
}

const TRANSFORMED: StepOutcome = Object.freeze({ value: 'SUCCESS' });

function replaceWith(result: unknown): Payload {
  if (!isObject(result))
    throw new SagawayError('OUTPUT_NOT_OBJECT', 'a transform without outputElement must produce an object');
  return result;
}

function expressionError(code: 'EXPRESSION_FAILED' | 'TRANSFORM_FAILED', step: CompiledStep, e: unknown): ErrorInfo {
  const msg = typeof (e as { message?: unknown })?.message === 'string' ? (e as Error).message : 'evaluation failed';
  return { code, message: `step "${step.id}": ${msg}`.slice(0, 512), http: 500, step: step.id };
}
