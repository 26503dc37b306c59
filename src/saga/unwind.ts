import { Cancel } from '../core/cancel.js';
import type { ErrorInfo } from '../core/errors.js';
import type { Lineage } from '../core/lineage.js';
import type { RunSpan, StepSpan } from '../core/otel.js';
import { round, type StepTracer, type TryRecord, type UndoRecord } from '../core/trace.js';
import type { EventStatus, Payload, RequestContext, SagaResult } from '../core/types.js';
import type { EngineDeps } from './deps.js';
import type { CompiledSaga } from './graph.js';
import { realClock } from './retry.js';
import { sendWithRetry } from './send.js';

/**
 * Compensation (issue 12): an event step with `compensate` registers its undo when it succeeds
 * (or ends ACK with followAck), with a copy of the payload of that moment; when the saga ends
 * FAIL or TIMEOUT, the registered undos run in reverse order of registration. A `pivot` step that
 * succeeds drops the registrations made before it: past the pivot the saga can only go forward.
 *
 * Each undo is one event with the idempotency key `<step key>:undo` (`<runId>:<stepId>:undo`, and
 * `<runId>:<stepId>#n:undo` for the n-th visit of a step in a loop, so each visit is undone once),
 * retried by the compensation's own `retry`. One that still fails does not stop the others; the
 * run's error then says `compensation: "PARTIAL"` instead of `"COMPLETED"`.
 */

/** One registered compensation; plain JSON, so that a journal can store it. */
export interface Registration {
  /** id of the step it undoes (its `compensate` is in the plan) */
  step: string;
  /** the undo's idempotency key */
  key: string;
  /** the payload when the step succeeded (a copy: later steps do not change it) */
  payload: Payload;
}

/** How the unwind of a journaled run is recorded, so that a restarted process goes on where it stopped. */
export interface UnwindJournal {
  /** before the first undo: the registrations, and the result the run ended with */
  begin(undo: readonly Registration[], result: SagaResult): Promise<void>;
  /** after each undo: its index in the registrations and how it ended */
  undone(index: number, status: EventStatus): Promise<void>;
}

/**
 * The payload copies one run may hold for its compensations, in bytes of JSON text (4 MiB). A
 * compensated step in a loop copies the payload at every visit; without a bound, a saga could
 * hold (and journal) maxSteps copies of a large payload.
 */
export const MAX_UNDO_BYTES = 4 * 1024 * 1024;

/**
 * A registration for a step that just succeeded, and the size of its copy. Past `budget` bytes
 * the payload is not copied (`copied: false`): the caller ends the run at once, so that the
 * payload as it is now is also the payload of that moment.
 */
export function register(
  step: string,
  key: string,
  payload: Payload,
  budget: number,
): { registration: Registration; bytes: number; copied: boolean } {
  const text = JSON.stringify(payload);
  const copied = text.length <= budget;
  return {
    registration: { step, key: `${key}:undo`, payload: copied ? (JSON.parse(text) as Payload) : payload },
    bytes: text.length,
    copied,
  };
}

/** Where an unwind stands: what to undo and how the undos done so far ended (by index). */
export interface UnwindState {
  undo: readonly Registration[];
  done: readonly (EventStatus | null | undefined)[];
}

/**
 * Run the compensations of a failed run and return its result with `compensation` set on the
 * error (unchanged when there was nothing to undo). The unwind is not cancelled by the caller
 * going away, and has a budget of its own: the saga's timeout from when it starts (it often runs
 * because that timeout passed).
 */
export async function unwind(
  deps: EngineDeps,
  saga: CompiledSaga,
  runId: string,
  context: RequestContext,
  result: SagaResult,
  at: UnwindState,
  journal: UnwindJournal | undefined,
  lineage?: Lineage,
  trace?: StepTracer,
  otel?: RunSpan,
): Promise<SagaResult> {
  const { undo, done } = at;
  if (undo.length === 0 || !result.error) return result;
  if (journal && done.length === 0) await journal.begin(undo, result);
  const clock = deps.clock ?? realClock;
  const deadline = clock.now() + saga.timeoutMs;
  const cancel = new Cancel();
  const timer = setTimeout(() => cancel.abort(), saga.timeoutMs);
  const undoContext: RequestContext = { ...context, error: withoutCompensation(result.error) };
  let partial = false;
  try {
    for (let i = undo.length - 1; i >= 0; i--) {
      const reg = undo[i] as Registration;
      let status = done[i] ?? undefined;
      if (status === undefined) {
        const span = otel?.step(`${reg.step}:undo`, 'undo'); // tracing: one span per compensation
        status = await undoOne(deps, saga, runId, reg, undoContext, deadline, cancel, lineage, trace?.undone, span);
        span?.end(status);
        if (journal) await journal.undone(i, status);
      }
      if (status !== 'SUCCESS' && status !== 'ACK') partial = true;
    }
  } finally {
    clearTimeout(timer);
  }
  const compensation = partial ? 'PARTIAL' : 'COMPLETED';
  deps.observer?.compensated?.(saga.id, compensation);
  const log = { saga: saga.id, runId, compensation, undone: undo.length, code: result.error.code };
  if (partial) deps.log.warn(log, 'saga compensations ended; some failed');
  else deps.log.info(log, 'saga compensations ended');
  return { ...result, error: { ...result.error, compensation } };
}

async function undoOne(
  deps: EngineDeps,
  saga: CompiledSaga,
  runId: string,
  reg: Registration,
  context: RequestContext,
  deadline: number,
  cancel: Cancel,
  lineage: Lineage | undefined,
  traced: ((undo: UndoRecord) => void) | undefined,
  span: StepSpan | undefined,
): Promise<EventStatus> {
  const step = saga.steps.get(reg.step);
  if (step?.type !== 'event' || !step.compensate) {
    // Only after a restart with a changed configuration: the step or its compensation is gone.
    deps.log.error({ saga: saga.id, runId, step: reg.step }, 'compensation not run: the step has none any more');
    return 'FAIL';
  }
  const began = traced ? performance.now() : 0;
  const attempts: TryRecord[] = [];
  const reply = await sendWithRetry(
    deps,
    {
      saga: saga.id,
      runId,
      stepId: `${reg.step}:undo`,
      step: `${reg.step}:undo`,
      idempotencyKey: reg.key,
      meta: step.compensate.meta,
      payload: reg.payload,
      context,
      lineage,
      deadline,
      onTry: traced && step.compensate.retry ? (t) => attempts.push(t) : undefined,
      span,
    },
    step.compensate.retry,
    cancel,
  );
  const status: EventStatus = cancel.aborted ? 'TIMEOUT' : reply.status;
  deps.observer?.undone?.(saga.id, reg.step, status);
  if (traced) {
    const error = status === 'SUCCESS' || status === 'ACK' ? undefined : reply.error;
    const ms = round(performance.now() - began);
    traced({
      step: reg.step,
      key: reg.key,
      status,
      ms,
      ...(error ? { error } : {}),
      ...(attempts.length > 1 ? { attempts } : {}),
    });
  }
  const log = { saga: saga.id, runId, step: reg.step, key: reg.key, status };
  if (status === 'SUCCESS' || status === 'ACK') deps.log.info(log, 'compensation done');
  else
    deps.log.warn({ ...log, code: reply.error?.code ?? status, detail: reply.error?.message }, 'compensation failed');
  return status;
}

function withoutCompensation(error: ErrorInfo): ErrorInfo {
  const { compensation: _c, ...rest } = error;
  return rest;
}
