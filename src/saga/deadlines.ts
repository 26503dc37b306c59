import { TIMED_OUT } from './failures.js';

/**
 * The deadlines of saga runs (runSaga's TIMEOUT), one timer per slot of SLOT_MS instead of one
 * per run. Every run has a deadline and nearly every run ends long before it: a `setTimeout` and
 * its `clearTimeout` per run (a Timeout object, a closure, the insertion into Node's timer lists)
 * measured ≈ 0.5 µs of a one-step request's CPU (issue 23, bench/profile-oneshot.mjs). Here a run
 * is one entry in its slot's Set; the slot's timer fires at the slot's end (a run times out at
 * most SLOT_MS after its deadline) and is cleared when its last run leaves, so that no timer
 * outlives the runs (a process with nothing running can exit).
 */

/** How late a deadline may fire: runs whose deadlines fall in the same slot share one timer. */
export const SLOT_MS = 4;

/** What a deadline aborts (a run's own Cancel). */
export interface Expirable {
  abort(reason?: unknown): void;
}

interface Slot {
  readonly runs: Set<Expirable>;
  timer: ReturnType<typeof setTimeout> | undefined;
}

const slots = new Map<number, Slot>();

/** Abort every run still in `slot` (TIMED_OUT: the run's result is TIMEOUT). */
function expire(key: number, slot: Slot): void {
  slots.delete(key);
  slot.timer = undefined;
  for (const run of slot.runs) run.abort(TIMED_OUT);
  slot.runs.clear();
}

/**
 * Abort `run` with TIMED_OUT `remainingMs` from now (at most SLOT_MS later). Returns the slot,
 * to pass to `leave` with the run when it ends first.
 */
export function arm(run: Expirable, remainingMs: number): number {
  const now = Date.now();
  const key = Math.ceil((now + Math.max(0, remainingMs)) / SLOT_MS);
  let slot = slots.get(key);
  if (slot === undefined) {
    const created: Slot = { runs: new Set(), timer: undefined };
    created.timer = setTimeout(() => expire(key, created), Math.max(0, key * SLOT_MS - now));
    slots.set(key, (slot = created));
  }
  slot.runs.add(run);
  return key;
}

/** `run` ended before its deadline: forget it (and the slot's timer with its last run). */
export function leave(key: number, run: Expirable): void {
  const slot = slots.get(key);
  if (slot === undefined || !slot.runs.delete(run) || slot.runs.size > 0) return;
  clearTimeout(slot.timer);
  slots.delete(key);
}
