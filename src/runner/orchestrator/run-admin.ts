import type { Settings } from '../../config/settings.js';
import { SagawayError } from '../../core/errors.js';
import type { AbortOutcome, RedriveOutcome, RedriveRequest, RunAdmin, RunPage, RunQuery } from '../../core/runs.js';
import type { State } from '../../states/state.js';
import { findRun, listRuns, RunIndexes } from './run-list.js';

/**
 * The journal side of the run routes (core/runs.ts RunAdmin, issue 22): the list, and the
 * redrive and abort of a run, each one guarded write of the run's journal record (a
 * compare-and-set on its version) that a runner's orphan scan then picks up: the record is
 * handed to no process (`owner: REDRIVE_OWNER`), so the next scan of its runner claims it and
 * goes on from where the record says (runner/orchestrator/resume.ts), as after a crash.
 */
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
    const found = await findRun(this.states, this.indexes, runId);
    if (!found) throw new SagawayError('RUN_NOT_FOUND', 'no such run');
    void request;
    void this.settings;
    void this.now;
    this.nudge();
    throw new SagawayError('RUN_NOT_REDRIVABLE', 'not yet');
  }

  async abort(runId: string, reason: string, by: string): Promise<AbortOutcome> {
    void reason;
    void by;
    const found = await findRun(this.states, this.indexes, runId);
    if (!found) throw new SagawayError('RUN_NOT_FOUND', 'no such run');
    throw new SagawayError('RUN_NOT_SUSPENDED', 'not yet');
  }
}
