import type { Logger } from '../../core/logger.js';
import { onFailLineage, type Lineage } from '../../core/lineage.js';
import type { RequestContext, SagaResult } from '../../core/types.js';
import { runSaga, type EngineDeps } from '../../saga/engine.js';
import type { CompiledSaga } from '../../saga/graph.js';

/**
 * A saga's `onFail` (runner.ts, after every run it starts or resumes): the saga it names, started
 * detached when a run fails, within bounds. Its failure is logged, never returned.
 */

/** onFail runs one runner keeps in flight at most (OnFailRuns.max). */
export const MAX_ON_FAIL_RUNS = 1000;

/** What the onFail runs of a runner need from it. */
export interface OnFailHost {
  log: Logger;
  /** the runner's saga with this id */
  sagaById(id: string): CompiledSaga | undefined;
  /** the engine's dependencies now (the metrics observer may be set after start) */
  engine(): EngineDeps;
}

/** The onFail runs of one runner. */
export class OnFailRuns {
  /** onFail runs in flight (detached from their callers; awaited on shutdown) */
  private readonly detached = new Set<Promise<void>>();
  /**
   * onFail runs in flight at most. They are detached, so no gateway limit counts them: a client
   * that makes runs fail fast (bad input reaching a fail step) would otherwise pile up one slow
   * onFail run per request. Past it, the onFail saga is not started and that is logged.
   */
  max = MAX_ON_FAIL_RUNS;

  constructor(private readonly host: OnFailHost) {}

  /**
   * After a run: a FAIL or TIMEOUT outcome (its compensations done) starts the saga's `onFail`
   * saga, detached: the caller's response does not wait for it, and its failure is logged,
   * never returned. Its payload is `{ parameters: <the failed run's input>, error, runId }`; its
   * run id is `<runId>.onFail`, so its idempotency keys are the failed run's and cannot collide.
   * A run that descends from an onFail run, by StartSaga at any depth, starts no onFail (no
   * chains, no loops, no fan-out: core/lineage.ts); a request's onFail runs share one budget.
   */
  after(
    saga: CompiledSaga,
    input: Record<string, unknown>,
    context: RequestContext,
    runId: string,
    result: SagaResult,
    lineage: Lineage,
  ): void {
    if (saga.onFail === undefined || (result.outcome !== 'FAIL' && result.outcome !== 'TIMEOUT')) return;
    const target = this.host.sagaById(saga.onFail);
    const log = { saga: saga.id, runId, onFail: saga.onFail };
    if (!target) {
      this.host.log.error(log, 'onFail saga not found');
      return;
    }
    if (lineage.onFail) {
      this.host.log.info(log, 'onFail saga not started: the run descends from an onFail run');
      return;
    }
    if (this.detached.size >= this.max) {
      this.host.log.warn({ ...log, running: this.detached.size }, 'onFail saga not started: too many running');
      return;
    }
    const own = onFailLineage(lineage);
    if (!own) {
      this.host.log.warn(log, "onFail saga not started: the request's onFail run budget is spent");
      return;
    }
    const error = result.error ?? { code: 'SAGA_FAILED', message: 'the saga failed' };
    this.host.log.info(log, 'starting onFail saga');
    const running = runSaga(this.host.engine(), {
      saga: target,
      input,
      payload: { parameters: input, error, runId },
      context: { request: context.request, user: context.user },
      deadline: Date.now() + target.timeoutMs,
      runId: `${runId}.onFail`,
      lineage: own,
    }).then((r) => {
      if (r.outcome === 'SUCCESS' || r.outcome === 'ACK')
        this.host.log.info({ ...log, outcome: r.outcome }, 'onFail saga ended');
      else this.host.log.warn({ ...log, outcome: r.outcome, code: r.error?.code }, 'onFail saga failed');
    });
    this.detached.add(running);
    void running.finally(() => this.detached.delete(running));
  }

  /** Wait (at most `timeoutMs`) for the onFail sagas still running, before the process closes its states. */
  async drain(timeoutMs = 10_000): Promise<void> {
    if (this.detached.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([Promise.allSettled([...this.detached]), late]);
    clearTimeout(timer);
  }
}
