import { randomUUID } from 'node:crypto';
import { Cancel, type Cancellable } from '../core/cancel.js';
import { httpFor, toErrorInfo } from '../core/errors.js';
import type { EventReply } from '../core/messages.js';
import type { Payload, RequestContext, SagaResult } from '../core/types.js';
import type { StepTracer } from '../core/trace.js';
import type { RunSpan, StepSpan } from '../core/otel.js';
import type { Lineage } from '../core/lineage.js';
import type { EngineDeps } from './deps.js';
import { conditionStep, transformStep, type StepOutcome } from './expression-steps.js';
import { abortedResult, CALLER_GONE, failed, failStepError, TIMED_OUT } from './failures.js';
import { type CompiledSaga, type CompiledStep, type EventStep, type SuccessStep } from './graph.js';
import { selectLink } from './links.js';
import { endStepSpan, traceStep, traceTries } from './trace-step.js';
import { responseOf, writeEventOutput, writeParsedOutput } from './payload.js';
import { realClock } from './retry.js';
import { suspendRun, type SuspendHook } from './suspend.js';
import { sendWithRetry } from './send.js';
import { MAX_UNDO_BYTES, register, unwind, type Registration, type UnwindJournal, type UnwindState } from './unwind.js';
import { waitStep, type ParkHook, type WaitResolution } from './wait-step.js'; // waits:

export type { EngineDeps, EngineObserver } from './deps.js';
export type { Registration, UnwindJournal } from './unwind.js';

/** What a journal keeps of a run besides its next step and payload (issue 12). */
export interface RunProgress {
  /** the compensations registered so far, oldest first */
  undo: readonly Registration[];
  /** visits of event steps so far (loops), so that a resumed run keeps its idempotency keys distinct */
  visits: Readonly<Record<string, number>>;
  /** waits: the run began by consuming a wait's resolution (the journal then forgets it) */
  resumedWait?: boolean;
}

/** One run of a saga. */
export interface SagaRun {
  saga: CompiledSaga;
  /** INPUT of DESIGN §4.1: the payload starts as { parameters: input } */
  input: Record<string, unknown>;
  context: RequestContext;
  /** epoch ms by which the saga must end */
  deadline: number;
  runId?: string;
  /** aborted when the caller is gone: the run stops at the next step */
  cancel?: Cancellable;
  /**
   * Called after every completed event step with the step that comes next and the payload (a
   * journal of the run's progress), except when the next step ends the saga. A rejection ends the run with its error. Only event steps
   * are journaled: they are the only steps with effects outside the payload.
   */
  journal?: (next: string, payload: Payload, context: RequestContext, progress: RunProgress) => Promise<void>;
  /** the journal of the unwind (compensations), with `journal` */
  unwindJournal?: UnwindJournal;
  /**
   * Awaited once, before the run's first event is dispatched (a journaled run's start record):
   * no step has an effect before there is a record to resume or undo it from. A rejection ends
   * the run with its error, and nothing is dispatched.
   */
  started?: () => Promise<void>;
  /** Continue a journaled run: start at `step` with `payload` instead of the start step. */
  resume?: { step: string; payload: Payload; progress?: RunProgress; waited?: WaitResolution }; // waits: waited
  /** waits: stores a run that reaches a wait step (saga/wait-step.ts); absent = such a run fails */
  park?: ParkHook;
  /** runs: stores a run whose retries ran out under `onExhausted: suspend` (saga/suspend.ts) */
  suspend?: SuspendHook;
  /** Continue a journaled run that was undoing its steps: the undos not yet done, then `result`. */
  resumeUnwind?: UnwindState & { result: SagaResult };
  /** the payload to start with instead of `{ parameters: input }` (an onFail saga's) */
  payload?: Payload;
  /** where the run comes from (core/lineage.ts); its events carry it */
  lineage?: Lineage;
  /** Told about every step when someone traces runs (the console); absent = no trace work at all. */
  trace?: StepTracer;
  /** the run's OpenTelemetry span (core/otel.ts); absent = tracing is off, no span work at all */
  otel?: RunSpan | undefined;
}

/**
 * Run a saga to its end (DESIGN §4). Never throws: every end is a SagaResult. The whole run is
 * bounded by `deadline` (TIMEOUT, 504) and by `maxSteps`; when the caller cancels, the
 * in-flight event is cancelled through its cancellation and nothing further runs.
 */
export async function runSaga(deps: EngineDeps, run: SagaRun): Promise<SagaResult> {
  const runId = run.runId ?? randomUUID();
  if (run.resumeUnwind) {
    return unwindSafely(deps, run, runId, run.context, run.resumeUnwind.result, run.resumeUnwind);
  }
  const cancel = new Cancel();
  const remaining = run.deadline - (deps.clock ?? realClock).now();
  const timer = setTimeout(() => cancel.abort(TIMED_OUT), Math.max(0, remaining));
  const unlink = run.cancel?.onAbort(() => cancel.abort(CALLER_GONE));
  const progress = run.resume?.progress;
  const state: RunState = {
    payload: run.resume ? run.resume.payload : (run.payload ?? { parameters: run.input }),
    context: run.context,
    visits: progress && Object.keys(progress.visits).length > 0 ? new Map(Object.entries(progress.visits)) : undefined,
    undo: progress ? [...progress.undo] : [],
    undoBytes: progress ? progress.undo.reduce((n, r) => n + JSON.stringify(r.payload).length, 0) : 0,
    unwind: true,
    journalFailed: false,
    started: run.started,
    sent: run.resume !== undefined,
    span: undefined,
  };
  let result: SagaResult;
  try {
    result = await loop(deps, run, runId, cancel, state);
  } catch (err) {
    if (cancel.aborted && !state.journalFailed) result = abortedResult(run.saga, runId, cancel.reason);
    else if (state.journalFailed) {
      // the store is down or the run was taken over: expected under faults, and the caller is told
      const error = toErrorInfo(err);
      deps.log.warn({ saga: run.saga.id, runId, code: error.code }, 'saga run stopped: its journal write failed');
      result = failed(run.saga, runId, error);
    } else {
      deps.log.error({ err, saga: run.saga.id, runId }, 'saga engine error');
      result = failed(run.saga, runId, toErrorInfo(err));
    }
  } finally {
    clearTimeout(timer);
    unlink?.();
  }
  if (result.outcome !== 'FAIL' && result.outcome !== 'TIMEOUT') return result;
  // A failure before any event reached a handler: nothing ran (issue 26, gateway idempotency keys).
  if (!state.sent) return { ...result, ran: 'none' };
  // A run whose journal write failed is not over for the journal: another process has taken it
  // over, or will resume it (and undo it, if it fails); this copy must not undo anything.
  if (!state.unwind || state.journalFailed || state.undo.length === 0) return result;
  return unwindSafely(deps, run, runId, state.context, result, { undo: state.undo, done: [] });
}

/** The unwind; a journal write that fails stops it (the run is then resumed, with its unwind, elsewhere). */
async function unwindSafely(
  deps: EngineDeps,
  run: SagaRun,
  runId: string,
  context: RequestContext,
  result: SagaResult,
  at: UnwindState,
): Promise<SagaResult> {
  try {
    const { unwindJournal, lineage, trace, otel } = run;
    return await unwind(deps, run.saga, runId, context, result, at, unwindJournal, lineage, trace, otel);
  } catch (err) {
    deps.log.error({ err: toErrorInfo(err), saga: run.saga.id, runId }, 'compensations stopped: journal write failed');
    return result;
  }
}

/** Where a run stands between two steps. The context is replaced, never changed in place. */
interface RunState {
  payload: Payload;
  context: RequestContext;
  /** visits of event steps in this run, for distinct idempotency keys on loops */
  visits: Map<string, number> | undefined;
  /** compensations registered so far, oldest first */
  undo: Registration[];
  /** bytes of payload copies the registrations hold (bounded by MAX_UNDO_BYTES) */
  undoBytes: number;
  /** false when the run ended at a `fail` step with `compensate: false` */
  unwind: boolean;
  /** a journal write failed: this copy of the run must stop without undoing anything */
  journalFailed: boolean;
  /** SagaRun.started until the first event step has awaited it */
  started: (() => Promise<void>) | undefined;
  /** an event may have reached a handler (one that came back `sent: false` did not) */
  sent: boolean;
  /** waits: the run began by consuming a wait's resolution */
  resumedWait?: boolean;
  /** the step in progress's span while tracing is on */
  span?: StepSpan | undefined;
}

/** A step's own work: an outcome to route on, or the run's end. */
type StepResult = StepOutcome | { end: SagaResult };

interface RunScope {
  deps: EngineDeps;
  run: SagaRun;
  runId: string;
  cancel: Cancellable;
}

async function loop(
  deps: EngineDeps,
  run: SagaRun,
  runId: string,
  cancel: Cancellable,
  state: RunState,
): Promise<SagaResult> {
  const { saga } = run;
  const scope: RunScope = { deps, run, runId, cancel };
  let step: CompiledStep = (run.resume && saga.steps.get(run.resume.step)) || saga.start;
  for (let count = 1; ; count++) {
    if (cancel.aborted) return abortedResult(saga, runId, cancel.reason);
    if (count > deps.maxSteps) {
      return failed(saga, runId, {
        code: 'STEP_LIMIT_EXCEEDED',
        message: `more than ${deps.maxSteps} steps`,
        http: 500,
      });
    }
    const began = run.trace === undefined ? 0 : performance.now();
    state.span = run.otel?.step(step.id, step.type);
    // A step that ended at once (start, success, a direct expression) costs no microtask.
    let result = runStep(scope, step, state);
    if (result instanceof Promise) result = await result;
    if (run.trace !== undefined) traceStep(run.trace, step, result, state.payload, began);
    if (state.span !== undefined) endStepSpan(state.span, result);
    if ('end' in result) return result.end;
    const next = route(scope, step, state, result);
    if ('end' in next) return next.end;
    // Journal the progress after an event step. Not before an end step (`success`, `fail`): the
    // outcome is written right after it, so the extra write would only shrink, by one write, the
    // window in which a crash re-runs the event (at least once, same idempotency key).
    if (run.journal && step.type === 'event' && next.type !== 'success' && next.type !== 'fail') {
      try {
        await run.journal(next.id, state.payload, state.context, {
          undo: state.undo,
          visits: state.visits ? Object.fromEntries(state.visits) : {},
          ...(state.resumedWait ? { resumedWait: true } : {}), // waits:
        });
      } catch (err) {
        state.journalFailed = true;
        throw err;
      }
    }
    step = next;
  }
}

/** One step of its kind. */
function runStep(scope: RunScope, step: CompiledStep, state: RunState): StepResult | Promise<StepResult> {
  switch (step.type) {
    case 'start':
      return START;
    case 'success':
      return { end: succeeded(scope, step, state.payload) };
    case 'fail':
      if (!step.compensate) state.unwind = false;
      return { end: failed(scope.run.saga, scope.runId, failStepError(step, state.context.error)) };
    case 'condition':
      return conditionStep(scope, step, state);
    case 'transform':
      return transformStep(scope, step, state);
    case 'event':
      return eventStep(scope, step, state);
    case 'wait': // waits:
      return waitStep(scope, step, state);
  }
}

const START: StepOutcome = Object.freeze({ value: '' });

function succeeded(scope: RunScope, step: SuccessStep, payload: Payload): SagaResult {
  return {
    outcome: 'SUCCESS',
    http: step.http,
    response: responseOf(payload, step.output),
    sagaId: scope.run.saga.id,
    runId: scope.runId,
  };
}

/**
 * An event step: its event, then its reply taken. Not async: a local action that answers at once
 * (runner.ts dispatchNow) is taken in the same tick, without a promise (issue 23).
 */
function eventStep(scope: RunScope, step: EventStep, state: RunState): StepResult | Promise<StepResult> {
  const { runId } = scope;
  // Event steps visited more than once in a run (a loop) need distinct idempotency keys, or the
  // second visit's write would be taken for a redelivery of the first and skipped.
  const visit = state.visits?.get(step.id) ?? 0;
  (state.visits ??= new Map()).set(step.id, visit + 1);
  const key = visit === 0 ? `${runId}:${step.id}` : `${runId}:${step.id}#${visit + 1}`;
  if (state.started) return recordStart(state).then(() => sendStep(scope, step, state, visit, key));
  return sendStep(scope, step, state, visit, key);
}

function sendStep(
  scope: RunScope,
  step: EventStep,
  state: RunState,
  visit: number,
  key: string,
): StepResult | Promise<StepResult> {
  const { run, runId, cancel } = scope;
  const reply = sendWithRetry(
    scope.deps,
    {
      saga: run.saga.id,
      runId,
      stepId: step.id,
      step: step.id,
      idempotencyKey: key,
      meta: step.meta,
      payload: state.payload,
      context: state.context,
      lineage: run.lineage,
      deadline: run.deadline,
      onTry: step.retry && traceTries(run.trace, step.id),
      span: state.span,
    },
    step.retry,
    cancel,
  );
  if (reply instanceof Promise) return reply.then((r) => takeReply(scope, step, state, visit, key, r));
  return takeReply(scope, step, state, visit, key, reply);
}

/** What an event step's reply makes of the run: its outcome, the payload written, its compensation. */
function takeReply(
  scope: RunScope,
  step: EventStep,
  state: RunState,
  visit: number,
  key: string,
  reply: EventReply,
): StepResult | Promise<StepResult> {
  const { run, runId, cancel } = scope;
  // A retried step's earlier tries may have been sent even when its last one was not.
  if (reply.sent !== false || step.retry !== undefined) state.sent = true;
  // An event cancelled by the saga's own end is not the step's failure.
  if (cancel.aborted) return { end: abortedResult(run.saga, runId, cancel.reason) };
  state.context = { ...state.context, status: reply.status };
  if (reply.status !== 'SUCCESS' && reply.status !== 'ACK') {
    const error = { ...(reply.error ?? { code: 'ACTION_FAILED', message: 'the action failed' }), step: step.id };
    if (step.retry?.onExhausted === 'suspend' && run.suspend) {
      const suspended = suspendRun(run.suspend, { sagaId: run.saga.id, runId, step: step.id, visit, error }, state);
      return suspended.then((end) => ({ end }));
    }
    return { value: reply.status, error };
  }
  try {
    const own = step.meta.elements;
    state.payload =
      own !== undefined && own.input === reply.inputElement && own.output === reply.outputElement
        ? writeParsedOutput(state.payload, reply.output, own.parsed)
        : writeEventOutput(state.payload, reply.output, reply.inputElement, reply.outputElement);
  } catch (e) {
    return { value: 'FAIL', error: { ...toErrorInfo(e), step: step.id } };
  }
  if (reply.status === 'ACK' && !step.meta.followAck) {
    return {
      end: { outcome: 'ACK', http: 202, response: responseOf(state.payload, undefined), sagaId: run.saga.id, runId },
    };
  }
  // Past a pivot the saga can only go forward; a compensation undoes this visit, with the
  // payload as it is now (its input), whatever later steps write.
  if (step.pivot) {
    state.undo = [];
    state.undoBytes = 0;
  }
  if (step.compensate) {
    const { registration, bytes, copied } = register(step.id, key, state.payload, MAX_UNDO_BYTES - state.undoBytes);
    state.undo.push(registration);
    state.undoBytes += bytes;
    // Too many copies (a compensated step in a long loop over a large payload): end here, so
    // that this step's payload, not copied, is still the one of its moment; everything is undone.
    if (!copied) {
      return {
        end: failed(run.saga, runId, {
          code: 'UNDO_LIMIT_EXCEEDED',
          message: `the compensations of this run would hold more than ${MAX_UNDO_BYTES} bytes of payload`,
          http: 500,
          step: step.id,
        }),
      };
    }
  }
  return { value: reply.status };
}

/** The run's start record, before its first event (SagaRun.started); a failure stops the run here. */
async function recordStart(state: RunState): Promise<void> {
  const started = state.started!;
  state.started = undefined;
  try {
    await started();
  } catch (err) {
    state.journalFailed = true;
    throw err;
  }
}

/**
 * The step after `step` (DESIGN §4.2, §4.3), or the run's end: a failed step ends the saga under
 * Auto Fail, else a FAIL/TIMEOUT/"*" link handles it, else UNHANDLED_STEP_FAILURE.
 */
function route(
  scope: RunScope,
  step: CompiledStep,
  state: RunState,
  outcome: StepOutcome,
): CompiledStep | { end: SagaResult } {
  const { run, runId } = scope;
  const { error, value } = outcome;
  if (error) {
    // Logged even when the flow handles it: a saga that maps an upstream 401 to its own
    // error code must still leave the cause where an operator can find it.
    scope.deps.log.info(
      {
        saga: run.saga.id,
        runId,
        step: step.id,
        status: value,
        code: error.code,
        http: error.http,
        detail: error.message,
      },
      'step failed',
    );
    state.context = { ...state.context, error };
    if (step.autoFail ?? run.saga.autoFail) return { end: failed(run.saga, runId, error) };
    const link = selectLink(step, value, true);
    if (link) return link.target;
    return {
      end: failed(run.saga, runId, {
        code: 'UNHANDLED_STEP_FAILURE',
        message: `step "${step.id}" failed with ${error.code} and no link handles it`,
        http: error.http ?? httpFor(error.code),
        step: step.id,
        cause: error,
      }),
    };
  }
  const link = selectLink(step, value, false);
  if (link) return link.target;
  return {
    end: failed(run.saga, runId, {
      code: 'NO_MATCHING_LINK',
      message: `step "${step.id}" ended with "${value}" and no link matches it`,
      http: 500,
      step: step.id,
    }),
  };
}
