import type { ErrorInfo } from '../core/errors.js';
import type { Payload, RequestContext, SagaResult } from '../core/types.js';
import { writeOutput } from './payload.js';
import type { CompiledSaga, WaitStep } from './graph.js';

/**
 * The engine's `wait` step (issue 21). Reached afresh, it computes what it waits for (the due
 * time, the correlation key), hands that to the runner's park hook, which stores the run in the
 * journal, and ends this copy of the run with the outcome WAITING: no memory, timer or slot is
 * held for it in any process. Reached as the first step of a resumed run with the wait's
 * resolution (a signal, a timeout, a due timer, a cancel), it ends with that condition value,
 * and the links choose as for any step.
 */

/** How a parked wait ended; the journal keeps it (`waitResult`) until the run moves past the step. */
export interface WaitResolution {
  /** SUCCESS (a due timer), SIGNAL, TIMEOUT, REJECTED or CANCELLED */
  value: 'SUCCESS' | 'SIGNAL' | 'TIMEOUT' | 'REJECTED' | 'CANCELLED';
  /** the signal's body (SIGNAL), or what the approvers decided (approvals) */
  data?: unknown;
  /** the step it resolves, and the visit of that step (loops) */
  step: string;
  visit: number;
}

/** What a run parks on (the park hook stores it). */
export interface ParkRequest {
  step: string;
  /** the step's visit number, from 1 (a wait in a loop) */
  visit: number;
  kind: 'timer' | 'signal';
  /** epoch ms: the timer is due (`until`) */
  dueAt?: number;
  /** ms from now: the timer is due (`for`) / the signal wait times out; the runner's clock says when now is */
  dueIn?: number;
  signal?: string;
  /** the correlation key, as text */
  key?: string;
}

/** What a parked run tells its caller (202 body `waitingOn`, status). */
export interface WaitingOn {
  step: string;
  kind: 'timer' | 'signal';
  /** ISO 8601: when the timer is due or the signal wait times out */
  until: string;
  signal?: string;
  key?: string;
}

/** The runner's park hook (SagaRun.park): stores the run and its wait; rejects when it could not. */
export type ParkHook = (
  wait: ParkRequest,
  payload: Payload,
  context: RequestContext,
  progress: { undo: readonly unknown[]; visits: Record<string, number> },
) => Promise<WaitingOn>;

/** What the wait step needs of the engine's run (engine.ts RunScope / RunState, structurally). */
interface WaitScope {
  run: { saga: CompiledSaga; park?: ParkHook; resume?: { step: string; waited?: WaitResolution } };
  runId: string;
}
interface WaitState {
  payload: Payload;
  context: RequestContext;
  visits: Map<string, number> | undefined;
  undo: readonly unknown[];
  journalFailed: boolean;
  /** set when the run began by consuming a wait's resolution (journal.ts clears `waitResult`) */
  resumedWait?: boolean;
}
type WaitResult = { value: string; error?: ErrorInfo } | { end: SagaResult };

/** Error codes of a wait's failure values. */
const FAILURES: Partial<Record<WaitResolution['value'], { code: string; http: number; message: string }>> = {
  TIMEOUT: { code: 'WAIT_TIMEOUT', http: 504, message: 'the wait timed out' },
  REJECTED: { code: 'WAIT_REJECTED', http: 409, message: 'the wait was rejected' },
  CANCELLED: { code: 'RUN_CANCELLED', http: 409, message: 'the run was cancelled' },
};

/** The wait step. */
export async function waitStep(scope: WaitScope, step: WaitStep, state: WaitState): Promise<WaitResult> {
  const { run, runId } = scope;
  const waited = run.resume?.waited;
  if (waited !== undefined && !state.resumedWait && waited.step === step.id) {
    // consumed once: a later visit of this step (a loop) parks again
    state.resumedWait = true;
    return resolved(scope, step, state, waited);
  }
  if (run.park === undefined) {
    const error = {
      code: 'WAIT_NEEDS_JOURNAL',
      message: 'a wait step needs a journal (runners.<name>.journal)',
      http: 500,
      step: step.id,
    };
    return { end: { outcome: 'FAIL', http: 500, error, sagaId: run.saga.id, runId } };
  }
  let request: ParkRequest;
  try {
    request = await parkRequest(step, state);
  } catch (e) {
    const message = typeof (e as Error)?.message === 'string' ? (e as Error).message : 'evaluation failed';
    return {
      value: 'FAIL',
      error: {
        code: 'EXPRESSION_FAILED',
        message: `step "${step.id}": ${message}`.slice(0, 512),
        http: 500,
        step: step.id,
      },
    };
  }
  (state.visits ??= new Map()).set(step.id, request.visit);
  let waitingOn: WaitingOn;
  try {
    waitingOn = await run.park(request, state.payload, state.context, {
      undo: state.undo,
      visits: Object.fromEntries(state.visits),
    });
  } catch (err) {
    // the run is not stored: this copy stops, and undoes nothing (engine.ts journalFailed)
    state.journalFailed = true;
    throw err;
  }
  return {
    end: {
      outcome: 'WAITING',
      http: 202,
      response: { status: 'WAITING', runId, waitingOn },
      sagaId: run.saga.id,
      runId,
    },
  };
}

async function parkRequest(step: WaitStep, state: WaitState): Promise<ParkRequest> {
  const plan = step.wait;
  const visit = (state.visits?.get(step.id) ?? 0) + 1;
  if (plan.signal !== undefined) {
    const request: ParkRequest = {
      step: step.id,
      visit,
      kind: 'signal',
      dueIn: plan.timeoutMs ?? 0,
      signal: plan.signal.name,
    };
    if (plan.signal.key !== undefined)
      request.key = keyText(await plan.signal.key.evaluate(state.payload, state.context));
    return request;
  }
  if (plan.until !== undefined) {
    return {
      step: step.id,
      visit,
      kind: 'timer',
      dueAt: dueTime(await plan.until.evaluate(state.payload, state.context)),
    };
  }
  return { step: step.id, visit, kind: 'timer', dueIn: plan.forMs ?? 0 };
}

/** A correlation key as text: a string or a number, at most 512 characters. */
function keyText(value: unknown): string {
  const text =
    typeof value === 'string' ? value : typeof value === 'number' && Number.isFinite(value) ? String(value) : undefined;
  if (text === undefined || text === '' || text.length > 512)
    throw new Error('signal.key must give a string or number (at most 512 characters)');
  return text;
}

/** `until`'s result: an ISO 8601 time or epoch milliseconds. */
function dueTime(value: unknown): number {
  const ms = typeof value === 'number' ? value : typeof value === 'string' ? Date.parse(value) : NaN;
  // within the range of a Date (±8.64e15 ms): beyond it the wait could not say when it is due
  if (!Number.isFinite(ms) || Number.isNaN(new Date(ms).getTime()))
    throw new Error('until must give an ISO 8601 time or epoch milliseconds (within the range of a date)');
  return ms;
}

function resolved(scope: WaitScope, step: WaitStep, state: WaitState, waited: WaitResolution): WaitResult {
  const output = step.wait.output;
  if (output !== undefined && waited.data !== undefined && waited.value !== 'CANCELLED') {
    try {
      state.payload = writeOutput(state.payload, waited.data, output, []);
    } catch (e) {
      const info = e as { code?: string; message?: string };
      return {
        value: 'FAIL',
        error: { code: info.code ?? 'OUTPUT_PATH_CONFLICT', message: String(info.message), http: 500, step: step.id },
      };
    }
  }
  const failure = FAILURES[waited.value];
  if (failure === undefined) return { value: waited.value };
  const error: ErrorInfo = { code: failure.code, message: failure.message, http: failure.http, step: step.id };
  // A cancel ends the run (then its compensations), unless the saga handles it by name.
  if (waited.value === 'CANCELLED' && !step.links.some((l) => l.when?.has('CANCELLED'))) {
    return { end: { outcome: 'FAIL', http: failure.http, error, sagaId: scope.run.saga.id, runId: scope.runId } };
  }
  return { value: waited.value, error };
}
