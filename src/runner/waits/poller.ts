import { toErrorInfo } from '../../core/errors.js';
import type { WaitStore } from '../../states/waits/store.js';
import { resumeWait, type WaitRunner } from './resume.js';

/**
 * The poller of one runner deployment's waits (issue 21): now and then, at the next wait's ready
 * time, and at once when a signal was applied in this process (`nudge`), it takes the ready waits
 * (due timers, resolved waits) with a lease and resumes their runs. Replicas share the work
 * through the leases; a parked run costs no timer here: the only timers are this poll and the
 * wake-up at the earliest ready time it read.
 *
 * A pipeline, not batch-and-wait: a full batch is followed by the next claim at once, while the
 * runs of the first go on (at most MAX_RESUMING at a time), and a nudge during a poll claims
 * again at once. Measured (BENCHMARKS.md "Issue 21"): taking 100 and waiting for all 100 runs to
 * end drained about 800 timers/s over two replicas, at a quarter of a core each.
 */

/** Waits taken by one claim at most. */
const BATCH = 250;
/** Resumed runs of one poller in progress at once, at most (the next claim waits below it). */
const MAX_RESUMING = 1000;
/**
 * How often (waits' clock) a poll also deletes signals past their expiry (store.prune, a bounded
 * batch): without it every correlation signal, kept or only remembered for its messageId, stays.
 */
const PRUNE_EVERY_MS = 10_000;

export class WaitPoller {
  private timer: NodeJS.Timeout | undefined;
  private wake: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  /** the look for the next ready time in progress (awaited on close: the store closes after) */
  private looking: Promise<void> | undefined;
  private again = false;
  /** resolves the current poll's wait for a nudge */
  private nudged: (() => void) | undefined;
  private closed = false;
  private prunedAt = -Infinity;
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

  /** Poll now (a signal was applied here, or a test moved its clock); a poll in progress claims once more. */
  nudge(): void {
    if (this.running) {
      this.again = true;
      this.nudged?.();
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
      } else if (!this.closed) this.looking = this.sleepUntilNext().finally(() => (this.looking = undefined));
    });
    return this.running;
  }

  private async pollOnce(): Promise<number> {
    let total = 0;
    const mine = new Set<Promise<void>>();
    while (!this.closed) {
      if (this.inFlight.size >= MAX_RESUMING) {
        await Promise.race(this.inFlight);
        continue;
      }
      this.again = false;
      const limit = Math.min(BATCH, MAX_RESUMING - this.inFlight.size);
      const now = this.now();
      let rows;
      try {
        rows = await this.store.claimReady(
          this.runner.name,
          this.runner.deployment,
          now,
          this.runner.instance,
          now + this.leaseMs,
          limit,
        );
      } catch (err) {
        this.runner.log.warn({ err: toErrorInfo(err) }, 'taking due waits failed; will retry');
        break;
      }
      total += rows.length;
      for (const row of rows) {
        const run = resumeWait(this.runner, this.store, row, now)
          .catch((err: unknown) => {
            this.runner.log.error({ err: toErrorInfo(err), runId: row.runId }, 'resuming a parked saga failed');
          })
          .finally(() => {
            this.inFlight.delete(run);
            mine.delete(run);
          });
        this.inFlight.add(run);
        mine.add(run);
      }
      // a full batch: more may be ready; a nudge meanwhile: a wait was resolved here
      if (rows.length === limit || this.again) continue;
      if (mine.size === 0) break;
      // nothing more ready now: wait for this poll's runs to end, or for a nudge
      const nudge = new Promise<void>((resolve) => (this.nudged = resolve));
      await Promise.race([Promise.allSettled([...mine]), nudge]);
      this.nudged = undefined;
      if (!this.again) break;
    }
    await Promise.allSettled([...mine]);
    const at = this.now();
    if (!this.closed && at - this.prunedAt >= PRUNE_EVERY_MS) {
      this.prunedAt = at;
      await this.store.prune(at).catch((err: unknown) => {
        this.runner.log.warn({ err: toErrorInfo(err) }, 'deleting expired signals failed; will retry');
      });
    }
    return total;
  }

  /**
   * Sleep until the earliest ready time of this deployment's waits (when it comes before the
   * next interval poll), so that a timer fires on time rather than up to an interval late. Waits
   * parked elsewhere after this look are found by the interval poll.
   */
  private async sleepUntilNext(): Promise<void> {
    clearTimeout(this.wake);
    if (this.closed) return;
    const now = this.now();
    let next: number | undefined;
    try {
      next = await this.store.nextReady(this.runner.name, this.runner.deployment, now);
    } catch {
      return; // the interval poll goes on
    }
    if (next === undefined || next - now >= this.intervalMs || this.closed) return;
    clearTimeout(this.wake);
    this.wake = setTimeout(() => this.nudge(), Math.max(0, next - now));
    this.wake.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    clearTimeout(this.wake);
    this.nudged?.();
    await Promise.allSettled([...this.inFlight, this.running, this.looking]);
  }
}
