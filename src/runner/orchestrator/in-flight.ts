/**
 * The gateway runs a runner is running now, in this process: what `sagaway admin runs` lists
 * (each runner process answers for itself over NATS, systems/nats/admin-responder.ts).
 *
 * Slots and a free list rather than a Map (issue 23): the registry lives as long as the process,
 * so it sits in V8's old generation, and a Map that takes one entry in and one out per request
 * rebuilds its hash table every few dozen requests, each table promoted and later marked (a third
 * of what the one-shot path left in the old generation, BENCHMARKS.md "memory (i23mem)"). The
 * slot arrays grow to the highest concurrency seen and are reused after that.
 */

/** One run in flight, as listed. */
export interface InFlightRun {
  requestId: string;
  saga: string;
  startedAt: number;
}

/** Slots per registry: an id is its generation × SLOTS + its slot (both exact in a double). */
const SLOTS = 2 ** 21;
/** Generations wrap here, so that an id stays below 2^52. */
const GENERATIONS = 2 ** 31;

/** The runs of one runner in flight in this process. */
export class InFlightRuns {
  private readonly slots: (InFlightRun | undefined)[] = [];
  /** The start order of the run in each slot (its id's generation, unwrapped, for `list`). */
  private readonly order: number[] = [];
  private readonly free: number[] = [];
  private started = 0;
  private count = 0;

  /**
   * Note a run; `remove` the returned id when it ends (an id, not a closure: one object less per
   * run). -1 when SLOTS runs are already in flight: the run is not listed, nothing else changes.
   */
  add(requestId: string, saga: string): number {
    const slot = this.free.pop() ?? this.slots.length;
    if (slot >= SLOTS) return -1;
    const seq = this.started++;
    this.slots[slot] = { requestId, saga, startedAt: Date.now() };
    this.order[slot] = seq;
    this.count++;
    return (seq % GENERATIONS) * SLOTS + slot;
  }

  /** The run `id` (from `add`) ended; an id removed before (its slot since reused) changes nothing. */
  remove(id: number): void {
    if (id < 0) return;
    const slot = id % SLOTS;
    const seq = this.order[slot];
    if (this.slots[slot] === undefined || seq === undefined || seq % GENERATIONS !== (id - slot) / SLOTS) return;
    this.slots[slot] = undefined;
    this.free.push(slot);
    this.count--;
  }

  /** How many runs are in flight. */
  get size(): number {
    return this.count;
  }

  /** The oldest `limit` runs in flight (an admin listing: sorted when asked, not kept in order). */
  list(limit: number): InFlightRun[] {
    const live: number[] = [];
    for (let slot = 0; slot < this.slots.length; slot++) if (this.slots[slot] !== undefined) live.push(slot);
    live.sort((a, b) => this.order[a]! - this.order[b]!);
    return live.slice(0, Math.max(0, limit)).map((slot) => this.slots[slot]!);
  }
}
