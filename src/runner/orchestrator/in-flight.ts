/**
 * The gateway runs a runner is running now, in this process: what `sagaway admin runs` lists
 * (each runner process answers for itself over NATS, systems/nats/admin-responder.ts). A map
 * entry per run costs next to nothing and needs no storage.
 */

/** One run in flight, as listed. */
export interface InFlightRun {
  requestId: string;
  saga: string;
  startedAt: number;
}

/** The runs of one runner in flight in this process. */
export class InFlightRuns {
  private readonly runs = new Map<number, InFlightRun>();
  private next = 0;

  /** Note a run; `remove` the returned id when it ends (an id, not a closure: one object less per run). */
  add(requestId: string, saga: string): number {
    const id = this.next++;
    this.runs.set(id, { requestId, saga, startedAt: Date.now() });
    return id;
  }

  /** The run `id` (from `add`) ended. */
  remove(id: number): void {
    this.runs.delete(id);
  }

  /** How many runs are in flight. */
  get size(): number {
    return this.runs.size;
  }

  /** The oldest `limit` runs in flight (insertion order is start order). */
  list(limit: number): InFlightRun[] {
    const out: InFlightRun[] = [];
    for (const run of this.runs.values()) {
      if (out.length >= limit) break;
      out.push(run);
    }
    return out;
  }
}
