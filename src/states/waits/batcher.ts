/**
 * Gathering the wait store's small statements of concurrent callers into one (issue 21's
 * throughput target): the parks, signal look-ups, resolutions and removals made by
 * the runs and requests of one event-loop turn go to PostgreSQL as one statement each (an array
 * parameter), instead of one round trip per run. Measured: a park and resume by signal made
 * eleven single round trips per run before; see BENCHMARKS.md "Issue 21".
 *
 * The guarantee of each call is that of the single statement: it resolves once the statement
 * holding it has committed (autocommit), with its own answer; items with the same key never
 * share a statement (the second waits for the next one), so that two compare-and-sets on one
 * wait are still decided one after the other. When the statement fails, every call in it fails
 * with that error, as each would have alone.
 */

/** The items of one statement, at most. */
export const MAX_BATCH = 500;
/** Statements of one kind in flight at once (the rest gather for the next). */
const MAX_IN_FLIGHT = 2;

interface Pending<I, O> {
  item: I;
  resolve(out: O): void;
  reject(err: unknown): void;
}

export class TickBatcher<I, O> {
  private queue: Pending<I, O>[] = [];
  private scheduled = false;
  private inFlight = 0;

  constructor(
    /** one statement for `items`; answers one output per item, in order */
    private readonly run: (items: I[]) => Promise<O[]>,
    /** items with the same key go to different statements */
    private readonly keyOf?: (item: I) => string,
  ) {}

  add(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= MAX_IN_FLIGHT || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    const batch = this.take();
    if (batch.length === 0) return;
    this.inFlight++;
    try {
      const outs = await this.run(batch.map((p) => p.item));
      batch.forEach((p, i) => p.resolve(outs[i] as O));
    } catch (err) {
      for (const p of batch) p.reject(err);
    }
    this.inFlight--;
    this.schedule();
  }

  private take(): Pending<I, O>[] {
    if (this.keyOf === undefined) return this.queue.splice(0, MAX_BATCH);
    const batch: Pending<I, O>[] = [];
    const rest: Pending<I, O>[] = [];
    const keys = new Set<string>();
    for (const p of this.queue) {
      const key = this.keyOf(p.item);
      if (batch.length < MAX_BATCH && !keys.has(key)) {
        keys.add(key);
        batch.push(p);
      } else rest.push(p);
    }
    this.queue = rest;
    return batch;
  }
}
