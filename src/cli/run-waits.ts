import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunnerSettings, Settings, SqliteStateSettings } from '../config/settings.js';
import { callerKey } from '../core/caller.js';
import { SagawayError } from '../core/errors.js';
import type { Principal, SagaResult } from '../core/types.js';
import { parseDuration } from '../core/units.js';
import type { Host } from '../runner/host.js';
import { hasWaits } from '../runner/waits/check.js';
import { TestClock } from '../testing/clock.js';

/**
 * Wait steps under `sagaway run` (issue 21, docs/waits.md "Testing with time"). A run of the
 * command lives and ends in the command: the runners with a wait step journal into a SQLite
 * file in a temporary folder, removed at exit (never the configured journal, whose replicas
 * would otherwise resume a run parked by a test command), and the waits read a clock that
 * stands still at `--clock` (default now) until `--advance` moves it.
 */

/** The state alias of the command's own journal. */
export const RUN_JOURNAL_ALIAS = 'sagaway_run_journal';

/** The longest `--advance`: ten years, enough for any wait (timeouts are bounded far below it). */
const MAX_ADVANCE_MS = 10 * 366 * 24 * 3600_000;
/** `--advance` given at most this many times. */
const MAX_ADVANCES = 100;

/** The settings the command runs, and the cleanup of its temporary journal. */
export async function throwawayJournal(settings: Settings): Promise<{ settings: Settings; cleanup(): Promise<void> }> {
  const waiting = Object.values(settings.runners).filter(hasWaits);
  if (waiting.length === 0) return { settings, cleanup: async () => undefined };
  const dir = await mkdtemp(join(tmpdir(), 'sagaway-run-'));
  const state: SqliteStateSettings = {
    type: 'sqlite',
    alias: RUN_JOURNAL_ALIAS,
    file: join(dir, 'journal.db'),
    table: RUN_JOURNAL_ALIAS,
    queries: {},
  };
  const runners: Record<string, RunnerSettings> = { ...settings.runners };
  for (const r of waiting) runners[r.name] = { ...r, journal: RUN_JOURNAL_ALIAS };
  return {
    settings: { ...settings, states: { ...settings.states, [RUN_JOURNAL_ALIAS]: state }, runners },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

/** `--clock TIME` (ISO 8601 or epoch ms; default now) as the waits' clock. */
export function runClock(value: string | undefined): TestClock {
  if (value === undefined) return new TestClock();
  const trimmed = value.trim();
  const ms = /^\d{1,16}$/.test(trimmed) ? Number(trimmed) : trimmed.length <= 64 ? Date.parse(trimmed) : NaN;
  if (!Number.isFinite(ms)) {
    throw new SagawayError(
      'VALIDATION_FAILED',
      `--clock needs an ISO 8601 time or epoch ms, got "${value.slice(0, 64)}"`,
    );
  }
  return new TestClock(ms);
}

/** Each `--advance DURATION`, in ms. */
export function parseAdvances(values: readonly string[] | undefined): number[] {
  const list = values ?? [];
  if (list.length > MAX_ADVANCES)
    throw new SagawayError('VALIDATION_FAILED', `--advance at most ${MAX_ADVANCES} times`);
  return list.map((v) => {
    const ms = parseDuration(v);
    if (ms === undefined || ms <= 0 || ms > MAX_ADVANCE_MS) {
      throw new SagawayError(
        'VALIDATION_FAILED',
        `--advance needs a positive duration (72h, 90s, 500ms), got "${v.slice(0, 64)}"`,
      );
    }
    return ms;
  });
}

/**
 * While the run waits, move the clock by the next advance and resume what is due: the end of the
 * run, or WAITING on what it waits for after the last advance.
 */
export async function advanceRun(
  host: Host,
  clock: TestClock,
  first: SagaResult,
  user: Principal | null,
  advances: readonly number[],
): Promise<SagaResult> {
  let result = first;
  const runId = waitingRunId(first);
  if (runId === undefined) return first;
  const ended = new Map<string, SagaResult>();
  const off = host.waits.onEnded((id, r) => ended.set(id, r));
  try {
    for (const ms of advances) {
      clock.advance(ms);
      await host.waits.poll();
      const end = ended.get(runId);
      if (end) return end;
      const status = await host.statusReader().lookup(callerKey(user, 'local'), runId);
      if (status?.status === 'DONE')
        return {
          outcome: status.outcome!,
          http: status.http ?? 200,
          response: status.response,
          ...(status.error ? { error: status.error } : {}),
        };
      const waitingOn = status && 'waitingOn' in status ? status.waitingOn : undefined;
      result = {
        outcome: 'WAITING',
        http: 202,
        response: { status: 'WAITING', runId, ...(waitingOn ? { waitingOn } : {}) },
      };
    }
    return result;
  } finally {
    off();
  }
}

function waitingRunId(result: SagaResult): string | undefined {
  if (result.outcome !== 'WAITING') return undefined;
  const id = (result.response as { runId?: unknown } | undefined)?.runId;
  return typeof id === 'string' ? id : undefined;
}
