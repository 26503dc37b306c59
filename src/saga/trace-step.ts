import type { ErrorInfo } from '../core/errors.js';
import { round, type StepTracer, type TryRecord } from '../core/trace.js';
import type { StepSpan } from '../core/otel.js';
import type { Payload } from '../core/types.js';
import type { CompiledStep } from './graph.js';

/** How a step ended, as the engine sees it: a condition value (and error), or the run's end. */
type StepEnd = { value: string; error?: ErrorInfo } | { end: { outcome: string; error?: ErrorInfo } };

/**
 * Report one step of a traced run (the console, docs/console.md). Called by the engine only when
 * the run has a tracer, so an untraced run pays one undefined check per step.
 */
export function traceStep(tracer: StepTracer, step: CompiledStep, result: StepEnd, payload: Payload, began: number) {
  const ms = round(performance.now() - began);
  if ('end' in result) {
    const error = result.end.error;
    // The run's error belongs to this step when the step raised it (a fail step, an event that ended the run).
    const own = error !== undefined && (error.step === undefined || error.step === step.id);
    const status = step.type === 'success' ? 'SUCCESS' : result.end.outcome;
    tracer({ step: step.id, kind: step.type, status, ms, ...(own ? { error } : {}) }, payload);
    return;
  }
  const { value, error } = result;
  const status = error ? (value === 'TIMEOUT' ? 'TIMEOUT' : 'FAIL') : step.type === 'event' ? value : 'SUCCESS';
  tracer(
    {
      step: step.id,
      kind: step.type,
      status,
      ms,
      ...(step.type === 'condition' ? { value } : {}),
      ...(error ? { error } : {}),
    },
    payload,
  );
}

/** Where a traced run's retried step reports each try (undefined: untraced, nothing to do). */
export function traceTries(tracer: StepTracer | undefined, step: string): ((t: TryRecord) => void) | undefined {
  const tried = tracer?.tried;
  return tried && ((t) => tried(step, t));
}

/** End a step's OpenTelemetry span with how the step ended (its error code, never its message). */
export function endStepSpan(span: StepSpan, result: StepEnd): void {
  if ('end' in result) span.end(result.end.outcome, result.end.error?.code);
  else
    span.end(
      result.error ? (result.value === 'TIMEOUT' ? 'TIMEOUT' : 'FAIL') : result.value || 'SUCCESS',
      result.error?.code,
    );
}
