import type { ErrorInfo } from '../core/errors.js';
import type { Payload, RequestContext, SagaResult } from '../core/types.js';
import type { Registration } from './unwind.js';

/**
 * Hold instead of fail (issue 22, docs/runs.md): an event step whose `retry` says
 * `onExhausted: suspend` and whose tries ran out does not fail the run. The run is stored
 * SUSPENDED at that step (the hook: a journaled run's journal.ts `suspender`), with the payload
 * as it was before the step, its compensations registered but not run, and the visits before
 * this one (so that a redrive sends the step again under the same idempotency key); this copy of
 * the run ends with the outcome SUSPENDED (202). An operator then redrives it or aborts it (its
 * compensations run): runner/orchestrator/run-admin.ts. A run without the hook (no journal, a
 * nested run) fails as without `onExhausted`.
 */

/** Stores a suspended run: the step it stopped at, the payload before it, the context with its error. */
export type SuspendHook = (
  step: string,
  payload: Payload,
  context: RequestContext,
  // engine.ts RunProgress (not imported: the engine imports this file)
  progress: { undo: readonly Registration[]; visits: Readonly<Record<string, number>> },
) => Promise<void>;

/** Suspend the run at `step` (its `visit`-th visit failed with `error`); the run's end. */
export async function suspendRun(
  hook: SuspendHook,
  at: { sagaId: string; runId: string; step: string; visit: number; error: ErrorInfo },
  state: {
    payload: Payload;
    context: RequestContext;
    undo: readonly Registration[];
    visits?: Map<string, number> | undefined;
    journalFailed: boolean;
  },
): Promise<SagaResult> {
  const visits = Object.fromEntries(state.visits ?? []);
  // the visits before this one: the redriven step keeps this visit's key
  if (at.visit === 0) delete visits[at.step];
  else visits[at.step] = at.visit;
  try {
    await hook(at.step, state.payload, { ...state.context, error: at.error }, { undo: state.undo, visits });
  } catch (err) {
    // not stored: this copy of the run stops and undoes nothing (engine.ts journalFailed), as for a wait
    state.journalFailed = true;
    throw err;
  }
  return {
    outcome: 'SUSPENDED',
    http: 202,
    response: {
      status: 'SUSPENDED',
      runId: at.runId,
      step: at.step,
      error: { code: at.error.code, message: at.error.message },
    },
    sagaId: at.sagaId,
    runId: at.runId,
  };
}
