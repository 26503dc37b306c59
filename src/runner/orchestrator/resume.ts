import type { Lineage } from '../../core/lineage.js';
import type { Logger } from '../../core/logger.js';
import type { RequestContext, SagaResult } from '../../core/types.js';
import { runSaga, type EngineDeps } from '../../saga/engine.js';
import type { ParkHook, WaitResolution } from '../../saga/wait-step.js';
import type { CompiledSaga } from '../../saga/graph.js';
import type { Journal } from './journal.js';
import type { JournalData, JournalEntry } from './journal-record.js';
import { reject } from './run-answers.js';
import { endRunSpan, journaledTrace, runSpan } from './run-span.js';
import { REDRIVE_OWNER } from './run-admin.js';

/**
 * Resuming journaled runs (runner.ts resumeOrphans): a run whose process is gone is taken over
 * by a survivor and finished from the step after its last completed event step, or from where
 * its unwind stopped.
 */

/** What resuming needs from the runner. */
export interface ResumeHost {
  /** the runner's name (for a saga it no longer serves) */
  name: string;
  log: Logger;
  /** the runner's saga with this id */
  sagaById(id: string): CompiledSaga | undefined;
  /** the engine's dependencies now */
  engine(): EngineDeps;
  /** the lineage of a request's own run */
  rootLineage(): Lineage;
  /** waits: parks a resumed run that reaches a wait step (runner/waits/); absent = no waits */
  parkHook?(saga: CompiledSaga, entry: JournalEntry, runId: string): ParkHook;
  /** after a run ends: its onFail (on-fail.ts) */
  afterRun(
    saga: CompiledSaga,
    input: Record<string, unknown>,
    context: RequestContext,
    runId: string,
    result: SagaResult,
    lineage: Lineage,
  ): void;
}

/**
 * Take over the journaled runs whose process is gone and finish them, each from the step
 * after its last completed event step (with a fresh saga timeout). Resolves when they ended.
 */
export async function resumeOrphans(
  host: ResumeHost,
  journal: Journal,
  isLive: (instance: string) => boolean,
): Promise<number> {
  const records = await journal.claimOrphans(isLive);
  await Promise.all(
    records.map(async (rec) => {
      const d = rec.data as JournalData;
      // a run taken over mid-unwind has compensated (a failed run so is not redrivable: run-admin.ts)
      const entry: JournalEntry = {
        id: rec.id,
        version: rec.version,
        ...(d.unwind && d.undo ? { unwound: true } : {}),
      };
      const saga = host.sagaById(d.sagaId);
      const context: RequestContext = {
        request: d.context.request,
        user: d.context.user,
        ...(d.lastStatus ? { status: d.lastStatus } : {}),
        ...(d.lastError ? { error: d.lastError } : {}),
      };
      let result: SagaResult;
      // Only gateway runs are journaled: a resumed run is a request's own run.
      const lineage = host.rootLineage();
      if (!saga) {
        result = reject('NOT_FOUND', `saga "${d.sagaId}" is not served by runner ${host.name} any more`);
      } else {
        const unwinding = d.unwind && d.undo ? d.unwind : undefined;
        host.log.info(
          { saga: d.sagaId, runId: d.runId, step: unwinding ? 'unwind' : (d.next ?? 'start') },
          'resuming journaled saga',
        );
        const progress = { undo: d.undo ?? [], visits: d.visits ?? {} };
        const waited = d['waitResult'] as WaitResolution | null | undefined; // waits: resumed from a wait
        // tracing: a new trace, linked to the run's first (run-span.ts); a redrive or abort
        // hands the record to REDRIVE_OWNER, which the trace names (the claim made this process
        // its owner: journal-scans.ts says whom from)
        const kind = d['claimedFrom'] === REDRIVE_OWNER ? 'redrive' : 'resume';
        const otel = runSpan(kind, d.sagaId, d.runId, host.name, journaledTrace(d.trace));
        result = await runSaga(host.engine(), {
          saga,
          input: d.input,
          context,
          deadline: Date.now() + saga.timeoutMs,
          runId: d.runId,
          lineage,
          journal: journal.stepper(entry),
          unwindJournal: journal.unwinder(entry, unwinding),
          ...(unwinding && d.undo
            ? { resumeUnwind: { undo: d.undo, done: unwinding.done, result: unwinding.result } }
            : {}),
          ...(!unwinding && d.next && d.payload
            ? { resume: { step: d.next, payload: d.payload, progress, ...(waited ? { waited } : {}) } }
            : {}),
          ...(host.parkHook ? { park: host.parkHook(saga, entry, d.runId) } : {}), // waits:
          otel,
          suspend: journal.suspender(entry),
        });
        endRunSpan(otel, result);
      }
      if (result.outcome === 'WAITING' || result.outcome === 'SUSPENDED') return; // waits: parked again; runs: suspended
      await journal.finish(entry, result);
      if (saga) host.afterRun(saga, d.input, context, d.runId, result, lineage);
    }),
  );
  return records.length;
}
