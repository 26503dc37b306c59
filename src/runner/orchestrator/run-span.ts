import { carrierOf, tracing, type RunSpan, type RunStartKind, type TraceCarrier } from '../../core/otel.js';
import type { SagaResult } from '../../core/types.js';

/**
 * The OpenTelemetry span of a saga run (docs/tracing.md), or undefined while tracing is off. A
 * request's run is a child of the request's span; a run picked up again from the journal (after
 * a crash, a wait, a redrive) starts a new trace linked to its first one, whose context the
 * journal keeps (`JournalData.trace`).
 */
export function runSpan(
  kind: RunStartKind,
  saga: string,
  runId: string,
  runner: string,
  from: TraceCarrier | undefined,
): RunSpan | undefined {
  const t = tracing.current;
  if (t === undefined) return undefined;
  return kind === 'request' || kind === 'nested'
    ? t.run({ kind, saga, runId, runner, parent: from })
    : t.run({ kind, saga, runId, runner, link: from });
}

/** The first trace of a journaled run, as its record keeps it (checked again: a record is data). */
export function journaledTrace(trace: unknown): TraceCarrier | undefined {
  if (trace === null || typeof trace !== 'object') return undefined;
  const t = trace as Record<string, unknown>;
  return carrierOf(t['traceparent'], t['tracestate']);
}

/** End a run's span with its result. */
export function endRunSpan(span: RunSpan | undefined, result: SagaResult): void {
  span?.end(result.outcome, result.error?.code);
}
