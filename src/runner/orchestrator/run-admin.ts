import type { Settings } from '../../config/settings.js';
import { SagawayError } from '../../core/errors.js';
import { isObject } from '../../core/path.js';
import {
  abortedError,
  type AbortOutcome,
  type RedriveOutcome,
  type RedriveRequest,
  type RunAdmin,
  type RunAttempt,
  type RunPage,
  type RunQuery,
} from '../../core/runs.js';
import type { SagaResult } from '../../core/types.js';
import type { CompiledSaga } from '../../saga/graph.js';
import type { State, StateRecord } from '../../states/state.js';
import type { JournalData } from './journal-record.js';
import { redrivePlan } from './redrive-plan.js';
import { findRun, listRuns, RunIndexes } from './run-list.js';

/**
 * The journal side of the run routes (core/runs.ts RunAdmin, issue 22, docs/runs.md): the list,
 * and the redrive and abort of a run. Each is one guarded write of the run's journal record (a
 * compare-and-set on the version read: of two concurrent redrives one wins, the other is
 * ALREADY_REDRIVEN) that hands the record to no process (`owner: REDRIVE_OWNER`, which no live
 * process is): the next orphan scan of its runner claims it and goes on from where the record
 * says (resume.ts), exactly as after a crash. A redrive goes on from a step with the payload the
 * journal kept; an abort resumes the unwind (the compensations), then the run ends FAIL
 * RUN_ABORTED.
 */

/** The owner of a record handed back to the runners by a redrive or abort (never a live process). */
export const REDRIVE_OWNER = 'redrive';
/** Attempts kept in a run's history (the oldest go first). */
export const MAX_ATTEMPTS = 20;

export class JournalRunAdmin implements RunAdmin {
  private readonly indexes = new RunIndexes();

  constructor(
    private readonly settings: Settings,
    private readonly states: readonly State[],
    private readonly now: () => number = Date.now,
    /** called after a redrive or abort was written (a runner in this process scans at once) */
    private readonly nudge: () => void = () => undefined,
  ) {}

  list(query: RunQuery): Promise<RunPage> {
    return listRuns(this.states, this.indexes, query);
  }

  async redrive(runId: string, request: RedriveRequest): Promise<RedriveOutcome> {
    const { state, rec, d, saga } = await this.run(runId);
    const now = this.now();
    if (d.status === 'RUNNING' && d.owner === REDRIVE_OWNER) throw alreadyRedriven();
    if (d.status === 'RUNNING' && typeof d['redrive'] === 'object' && d['redrive'] !== null) {
      throw alreadyRedriven();
    }
    if (d.status === 'RUNNING' || d.status === 'WAITING') {
      throw notRedrivable(
        `the run is ${d.status}; an operator cancels a waiting run with POST /api/runs/<runId>/abort`,
      );
    }
    if (d.status === 'DONE') {
      const outcome = d.result?.outcome;
      if (outcome !== 'FAIL' && outcome !== 'TIMEOUT')
        throw notRedrivable(`the run ended ${outcome ?? 'without a result'}`);
      const retention = this.settings.runners[d.runner]?.journalRetentionMs;
      if (retention !== undefined && now - d.updatedAt > retention) {
        throw new SagawayError(
          'HISTORY_EXPIRED',
          "the run ended before its runner's journalRetention: start a new run",
        );
      }
      if (d.compensated === true) throw notRedrivable('its compensations ran: start a new run');
      if (d.payload === null) throw notRedrivable('its journal kept no payload to go on from');
    }
    const plan = redrivePlan(saga, request.fromStep, d.next ?? undefined);
    const outcome: RedriveOutcome = {
      runId,
      dryRun: request.dryRun,
      fromStep: plan.from.id,
      steps: plan.steps,
      notIdempotent: plan.steps.filter((s) => s.type === 'event' && s.idempotent !== true).map((s) => s.id),
      redriveCount: (d.redriveCount ?? 0) + (request.dryRun ? 0 : 1),
      status: request.dryRun ? d.status : 'RUNNING',
    };
    if (request.dryRun) return outcome;
    const input = request.input ?? d.input;
    // from the start: the payload a run begins with, resumed at the start step like any other
    // (its visits and compensations kept: a step that had succeeded runs again under a new key)
    const payload =
      plan.from.type === 'start'
        ? { parameters: input }
        : isObject(d.payload)
          ? { ...d.payload }
          : { parameters: d.input };
    if (request.input !== undefined) payload['parameters'] = request.input;
    // waits: a wait step that failed the run itself (timed out, rejected or cancelled, no link
    // for it) is waited anew: its resolution, replayed, would fail the run the same way at once
    const waited = isObject(d['waitResult']) ? d['waitResult'] : undefined;
    const rewait = waited?.['step'] === plan.from.id && d.result?.error?.step === plan.from.id;
    await this.write(state, rec, {
      ...(rewait ? { waitResult: null } : {}),
      status: 'RUNNING',
      owner: REDRIVE_OWNER,
      next: plan.from.id,
      payload,
      input,
      result: null,
      lastStatus: null,
      lastError: null,
      unwind: null,
      redriveCount: outcome.redriveCount,
      attempts: attemptsAfter(d),
      redrive: { at: now, by: request.by, reason: request.reason, fromStep: plan.from.id },
      updatedAt: now,
    });
    this.nudge();
    return outcome;
  }

  async abort(runId: string, reason: string, by: string): Promise<AbortOutcome> {
    const { state, rec, d } = await this.run(runId);
    if (d.status !== 'SUSPENDED') {
      if (d.status === 'RUNNING' && d.owner === REDRIVE_OWNER) throw alreadyRedriven();
      throw new SagawayError('RUN_NOT_SUSPENDED', `the run is ${d.status}: only a SUSPENDED run is aborted`);
    }
    const now = this.now();
    const result: SagaResult = { outcome: 'FAIL', http: 409, error: abortedError(reason), sagaId: d.sagaId, runId };
    const undo = d.undo ?? [];
    // the runner's scan resumes the unwind (resume.ts): each compensation, newest first, then the end
    await this.write(state, rec, {
      status: 'RUNNING',
      owner: REDRIVE_OWNER,
      undo,
      unwind: { result, done: [] },
      attempts: attemptsAfter(d),
      aborted: { at: now, by, reason },
      updatedAt: now,
    });
    this.nudge();
    return { runId, compensations: undo.length, status: 'RUNNING' };
  }

  /** The run's record and saga, or RUN_NOT_FOUND / RUN_NOT_REDRIVABLE. */
  private async run(runId: string): Promise<{ state: State; rec: StateRecord; d: JournalData; saga: CompiledSaga }> {
    const found = await findRun(this.states, this.indexes, runId);
    if (!found) throw new SagawayError('RUN_NOT_FOUND', 'no such run');
    const d = found.rec.data as JournalData;
    const saga = this.settings.runners[d.runner]?.plans.find((p) => p.id === d.sagaId);
    if (!saga) throw notRedrivable(`saga "${d.sagaId}" is not served by runner "${d.runner}" any more`);
    return { ...found, d, saga };
  }

  /** The guarded write: the record as read, or ALREADY_REDRIVEN (another redrive or abort came first). */
  private async write(state: State, rec: StateRecord, patch: Record<string, unknown>): Promise<void> {
    try {
      await state.update(rec.id, patch, { expectedVersion: rec.version });
    } catch (err) {
      if (err instanceof SagawayError && (err.code === 'STALE_VERSION' || err.code === 'RECORD_NOT_FOUND')) {
        throw alreadyRedriven();
      }
      throw err;
    }
  }
}

function alreadyRedriven(): SagawayError {
  return new SagawayError('ALREADY_REDRIVEN', 'the run was redriven (or aborted) by another request first');
}

function notRedrivable(why: string): SagawayError {
  return new SagawayError('RUN_NOT_REDRIVABLE', `the run cannot be redriven: ${why}`);
}

/** The run's history with the attempt that just ended, the last MAX_ATTEMPTS. */
function attemptsAfter(d: JournalData): RunAttempt[] {
  const before = Array.isArray(d['attempts']) ? (d['attempts'] as RunAttempt[]) : [];
  const redrive = isObject(d['redrive']) ? d['redrive'] : undefined;
  const error = d.result?.error ?? (isObject(d.lastError) ? d.lastError : undefined);
  const ended: RunAttempt = {
    attempt: d.redriveCount ?? 0,
    startedAt: typeof redrive?.['at'] === 'number' ? redrive['at'] : d.startedAt,
    endedAt: d.updatedAt,
    outcome: d.status === 'SUSPENDED' ? 'SUSPENDED' : (d.result?.outcome ?? 'FAIL'),
    ...(error?.code ? { errorCode: error.code } : {}),
    ...(error?.step ? { step: error.step } : d.status === 'SUSPENDED' && d.next ? { step: d.next } : {}),
  };
  return [...before, ended].slice(-MAX_ATTEMPTS);
}
