import { SagawayError } from './errors.js';

/**
 * Where a saga run comes from (issue 19, item 2). One request may start many runs: its own, the
 * nested sagas its steps start (saga.StartSaga, at any depth), and onFail runs. Two rules span
 * them all, so the lineage travels with every event a run sends (over NATS too) and every run
 * it starts:
 *
 * - A run that descends from an onFail run never starts an onFail: an onFail saga that starts
 *   the saga it is the onFail of (or anything that fails) cannot multiply (511 runs from one
 *   request before this rule).
 * - A request's runs are counted against one budget (`runners.<name>.maxRunsPerRequest`): fan-out
 *   past it fails with RUN_BUDGET_EXCEEDED. The onFail runs of one request, and what they start,
 *   share a second budget of the same size, so the onFail saga still runs when the request's own
 *   budget is what failed it.
 *
 * In one process the counts are shared objects (a saga's steps run one at a time, so the count
 * is exact); an event that crosses to another process carries a copy, and the runs started
 * there are counted from that copy and are not added back to the sender's count.
 */

/** Runs counted against one budget. */
export interface RunCount {
  used: number;
  readonly max: number;
}

/** The lineage of a run; see above. */
export interface Lineage {
  /** the run is an onFail run or descends from one: it starts no onFail */
  readonly onFail: boolean;
  /** the runs of this run's tree (the request's, or its onFail runs') */
  readonly runs: RunCount;
  /** the onFail runs of the request (and what they start) */
  readonly onFailRuns: RunCount;
}

/** Runs one request may start when the runner sets nothing (runners.<name>.maxRunsPerRequest). */
export const DEFAULT_MAX_RUNS_PER_REQUEST = 100;

/** The lineage of a request's own run (it counts as the first run of its budget). */
export function rootLineage(max: number): Lineage {
  return { onFail: false, runs: { used: 1, max }, onFailRuns: { used: 0, max } };
}

/** Count one nested run against the lineage's budget; RUN_BUDGET_EXCEEDED when it is spent. */
export function takeRun(lineage: Lineage, what: string): void {
  const runs = lineage.runs;
  if (runs.used >= runs.max) {
    throw new SagawayError(
      'RUN_BUDGET_EXCEEDED',
      `${what}: this request has started ${runs.used} saga runs, its budget (maxRunsPerRequest: ${runs.max})`,
    );
  }
  runs.used++;
}

/** The lineage of an onFail run, counted against the request's onFail budget; undefined when it is spent. */
export function onFailLineage(parent: Lineage): Lineage | undefined {
  const runs = parent.onFailRuns;
  if (runs.used >= runs.max) return undefined;
  runs.used++;
  return { onFail: true, runs, onFailRuns: runs };
}

/**
 * A lineage that came over the wire (a broker message): checked field by field, so that a
 * malformed one is treated as absent (the runner then starts a fresh lineage) rather than trusted.
 */
export function lineageFromWire(value: unknown): Lineage | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const runs = countFromWire(v['runs']);
  const onFailRuns = countFromWire(v['onFailRuns']);
  if (!runs || !onFailRuns) return undefined;
  return { onFail: v['onFail'] === true, runs, onFailRuns: v['onFail'] === true ? runs : onFailRuns };
}

function countFromWire(value: unknown): RunCount | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { used, max } = value as Record<string, unknown>;
  const ok = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
  return ok(used) && ok(max) ? { used, max } : undefined;
}
