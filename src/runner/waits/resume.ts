import { SagawayError, toErrorInfo } from '../../core/errors.js';
import type { Lineage } from '../../core/lineage.js';
import type { Logger } from '../../core/logger.js';
import type { RequestContext, SagaResult } from '../../core/types.js';
import { runSaga, type EngineDeps } from '../../saga/engine.js';
import type { CompiledSaga } from '../../saga/graph.js';
import type { ParkHook, WaitResolution } from '../../saga/wait-step.js';
import type { State } from '../../states/state.js';
import type { WaitRow, WaitStore } from '../../states/waits/store.js';
import type { Journal } from '../orchestrator/journal.js';
import type { JournalData, JournalEntry } from '../orchestrator/journal-record.js';
import { endRunSpan, journaledTrace, runSpan } from '../orchestrator/run-span.js';

/**
 * Resuming a parked run whose wait a poller took (poller.ts). The run's journal record is taken
 * over with one compare-and-set that also writes how the wait ended (`waitResult`), then the
 * wait row is removed, then the engine goes on from the wait step, exactly as the orphan scan
 * resumes a run (runner.ts resumeOrphans). A crash after the take-over leaves a RUNNING record
 * that carries the resolution: the orphan scan resumes it with the same one; a crash before it
 * leaves the row, whose lease runs out, for another poller. So a wait's resolution is applied
 * once, and the steps after it run at least once (event steps: the same idempotency keys).
 */

/** What resuming needs of the runner that owns the run (runner.ts waitRunner). */
export interface WaitRunner {
  readonly name: string;
  readonly instance: string;
  readonly log: Logger;
  readonly journal: Journal;
  /** the journal's own state (reads and the take-over's compare-and-set) */
  readonly journalState: State;
  saga(id: string): CompiledSaga | undefined;
  engineDeps(): EngineDeps;
  rootLineage(): Lineage;
  /** a run's end: onFail, and whoever holds a request open for it (Prefer: wait) */
  afterRun(saga: CompiledSaga, data: JournalData, context: RequestContext, result: SagaResult, lineage: Lineage): void;
  /** the park hook of a run of this runner */
  parkHook(saga: CompiledSaga, entry: JournalEntry, runId: string): ParkHook;
}

/** Resume the run of a wait this process leased; resolves when the run ended or parked again. */
export async function resumeWait(runner: WaitRunner, store: WaitStore, row: WaitRow, now: number): Promise<void> {
  // the claim read the record in the same statement (PostgreSQL), else it is read here
  const rec =
    row.journal !== undefined
      ? row.journal && { id: row.journalId, ...row.journal }
      : await runner.journalState.get(row.journalId);
  const d = rec?.data as JournalData | undefined;
  const wait = d?.['wait'] as { waitId?: string; step?: string; visit?: number } | undefined;
  if (!rec || !d || d.status === 'DONE') {
    // the run ended (or was pruned): its wait is moot
    await store.remove(row.waitId);
    return;
  }
  // Still RUNNING: being parked, or moving on elsewhere. The lease runs out; it is looked at again.
  if (d.status !== 'WAITING' || wait?.step !== row.step || wait.visit !== row.visit) return;
  const waited: WaitResolution = {
    ...(row.resolution ?? { value: row.kind === 'timer' ? 'SUCCESS' : 'TIMEOUT' }),
    step: row.step,
    visit: row.visit,
  };
  if (row.resolution === null && row.dueAt > now) return; // not due (ready_at moved by an approval only)
  // The take-over: a compare-and-set on the version read, group-committed with the other
  // journal writes of this turn (journal.ts); a version that moved on means another process
  // took the run (RUNNER_UNAVAILABLE) and this one leaves it.
  const entry: JournalEntry = { id: rec.id, version: rec.version };
  try {
    await runner.journal.patchRun(entry, {
      status: 'RUNNING',
      owner: runner.instance,
      waitResult: waited,
      waitingOn: null,
      updatedAt: Date.now(),
    });
  } catch (err) {
    if (err instanceof SagawayError && (err.code === 'RUNNER_UNAVAILABLE' || err.code === 'STALE_VERSION')) return;
    throw err;
  }
  // removed while the run goes on: left behind, the row is removed by the next poller that
  // takes it (the journal is RUNNING or DONE then)
  const removed = store.remove(row.waitId).catch((err: unknown) => {
    runner.log.warn({ err: toErrorInfo(err), runId: d.runId }, 'resumed wait not removed');
  });
  try {
    await continueRun(runner, d, entry, waited);
  } finally {
    await removed;
  }
}

/**
 * Run a journaled run on from its wait step with `waited` (the poller's take-over, or the orphan
 * scan finding a RUNNING record that carries a resolution), and record its end.
 */
export async function continueRun(
  runner: WaitRunner,
  d: JournalData,
  entry: JournalEntry,
  waited: WaitResolution,
): Promise<void> {
  const saga = runner.saga(d.sagaId);
  const context: RequestContext = {
    request: d.context.request,
    user: d.context.user,
    ...(d.lastStatus ? { status: d.lastStatus } : {}),
    ...(d.lastError ? { error: d.lastError } : {}),
  };
  const lineage = runner.rootLineage();
  if (!saga || !d.next || !d.payload) {
    const error = toErrorInfo(
      new SagawayError('NOT_FOUND', `saga "${d.sagaId}" is not served by runner ${runner.name} any more`),
    );
    await runner.journal.finish(entry, { outcome: 'FAIL', http: 500, error, runId: d.runId });
    return;
  }
  runner.log.info({ saga: d.sagaId, runId: d.runId, step: d.next, value: waited.value }, 'resuming a parked saga');
  // tracing: a resumed wait is a new trace linked to the run's first (orchestrator/run-span.ts)
  const otel = runSpan('wait', d.sagaId, d.runId, runner.name, journaledTrace(d.trace));
  const result = await runSaga(runner.engineDeps(), {
    saga,
    input: d.input,
    context,
    // a fresh saga timeout: the saga's `timeout` bounds each stretch between two waits
    deadline: Date.now() + saga.timeoutMs,
    runId: d.runId,
    lineage,
    journal: runner.journal.stepper(entry),
    unwindJournal: runner.journal.unwinder(entry),
    park: runner.parkHook(saga, entry, d.runId),
    suspend: runner.journal.suspender(entry), // runs: issue 22
    resume: { step: d.next, payload: d.payload, progress: { undo: d.undo ?? [], visits: d.visits ?? {} }, waited },
    otel,
  });
  endRunSpan(otel, result);
  if (result.outcome === 'WAITING' || result.outcome === 'SUSPENDED') return; // runs: suspended (issue 22)
  await runner.journal.finish(entry, result);
  runner.afterRun(saga, d, context, result, lineage);
}
