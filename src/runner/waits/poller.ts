import { toErrorInfo } from '../../core/errors.js';
import type { WaitStore } from '../../states/waits/store.js';
import { resumeWait, type WaitRunner } from './resume.js';

/**
 * The poller of one runner deployment's waits (issue 21): now and then, and at once when a
 * signal was applied in this process (`nudge`), it takes the ready waits (due timers, resolved
 * waits) with a lease and resumes their runs. Replicas share the work through the leases; a
 * parked run costs no timer here: the only timer is this poll.
 */

/** Waits taken by one poll at most (then the next poll follows at once). */
const BATCH = 100;

export class WaitPoller {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private again = false;
  private closed = false;
  /** resumes in flight (awaited on close) */
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly runner: WaitRunner & { readonly deployment: string },
    private readonly store: WaitStore,
    private readonly now: () => number,
    private readonly intervalMs: number,
    /**
     * How long a taken wait is leased (runners.R.waitLease, default 30 s): longer than resuming
     * its run takes; after it, another replica may take the wait (this process was killed).
     */
    private readonly leaseMs: number,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.nudge(), this.intervalMs);
    this.timer.unref();
  }

  /** Poll now (a signal was applied here, or a test moved its clock); a poll in progress polls once more. */
  nudge(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    void this.poll();
  }

  /**
   * Take the ready waits and resume their runs; resolves with how many were taken, once their
   * runs ended or parked again.
   */
  poll(): Promise<number> {
    if (this.running) return this.running.then(() => this.poll());
    this.running = this.pollOnce().finally(() => {
      this.running = undefined;
      if (this.again && !this.closed) {
        this.again = false;
        void this.poll();
      }
    });
    return this.running;
  }

  private async pollOnce(): Promise<number> {
    if (this.closed) return 0;
    let total = 0;
    for (;;) {
      const now = this.now();
      let rows;
      try {
        rows = await this.store.claimReady(
          this.runner.name,
          this.runner.deployment,
          now,
          this.runner.instance,
          now + this.leaseMs,
          BATCH,
        );
      } catch (err) {
        this.runner.log.warn({ err: toErrorInfo(err) }, 'taking due waits failed; will retry');
        return total;
      }
      total += rows.length;
      await Promise.all(
        rows.map((row) => {
          const run = resumeWait(this.runner, this.store, row, now).catch((err: unknown) => {
            this.runner.log.error({ err: toErrorInfo(err), runId: row.runId }, 'resuming a parked saga failed');
          });
          this.inFlight.add(run);
          return run.finally(() => this.inFlight.delete(run));
        }),
      );
      if (rows.length < BATCH || this.closed) return total;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await Promise.allSettled([...this.inFlight]);
  }
}
