import { join } from 'node:path';
import type { Report } from '../../config/compile.js';
import type { RunnerSettings, Settings, SqliteStateSettings } from '../../config/settings.js';

/**
 * A saga with a `wait` step needs a journal (issue 21): a parked run lives there and nowhere
 * else. Distributed (a nats system in the file): `runners.<name>.journal` is required, and an
 * error says so at the wait step. Embedded (`sagaway start`, the test kit): without one, the
 * process keeps a SQLite journal at `.sagaway/journal.db` next to the configuration, so that
 * the first example needs no database; a warning says where.
 */

/**
 * Whether one of a runner's sagas has a wait step. Here, not in host-waits.ts, so that
 * `sagaway validate` (which runs these checks) does not load the wait stores, poller and engine.
 */
export function hasWaits(runner: RunnerSettings): boolean {
  return runner.plans.some((saga) => saga.waits);
}

/** Alias and file of the journal `sagaway start` keeps for waits when none is named. */
export const EMBEDDED_JOURNAL_ALIAS = 'sagaway_journal';
export const EMBEDDED_JOURNAL_FILE = join('.sagaway', 'journal.db');

/** Report the runners whose sagas wait without a journal. */
export function checkWaitJournals(settings: Settings, report: Report): void {
  const distributed = Object.values(settings.systems).some((s) => s.type === 'nats');
  for (const runner of Object.values(settings.runners)) {
    if (runner.journal !== undefined || !hasWaits(runner)) continue;
    for (const saga of runner.sagas) {
      saga.steps.forEach((step, i) => {
        if (step.type !== 'wait') return;
        const at = [...saga.source.at, 'steps', i];
        if (distributed) {
          report(
            saga.source.file,
            at,
            `a wait step needs a journal: set runners.${runner.name}.journal (a sqlite or postgres state)`,
          );
        } else {
          report(
            saga.source.file,
            at,
            `a wait step needs a journal; runners.${runner.name}.journal is not set, so \`sagaway start\` keeps one in ${EMBEDDED_JOURNAL_FILE}`,
            'warning',
          );
        }
      });
    }
  }
}

/**
 * A correlation signal (`POST /api/signals/<name>`) kept for its `ttl` lives in one wait store,
 * the one of the journal whose runners wait on `name` by key (service.ts signalHome), and a wait
 * finds kept signals in its own journal's store. So every keyed wait on one signal name must be
 * in runners of one journal, or a kept signal could be missed by a wait in another, or (kept
 * in both) consumed twice. An error at each wait on `name` in a runner of another journal than
 * the first one found.
 */
export function checkSignalHomes(settings: Settings, report: Report): void {
  const homes = new Map<string, { journal: string; runner: string }>();
  for (const runner of Object.values(settings.runners)) {
    const journal = runner.journal ?? EMBEDDED_JOURNAL_ALIAS;
    for (const saga of runner.sagas) {
      saga.steps.forEach((step, i) => {
        const signal = step.type === 'wait' ? step.signal : undefined;
        if (signal === undefined || signal.key === undefined) return;
        const home = homes.get(signal.name);
        if (home === undefined) return void homes.set(signal.name, { journal, runner: runner.name });
        if (home.journal === journal) return;
        report(
          saga.source.file,
          [...saga.source.at, 'steps', i, 'signal', 'name'],
          `signal "${signal.name}" is waited on by key in runners of two journals (runner ${home.runner}: ${home.journal}, runner ${runner.name}: ${journal}); a kept signal lives in one journal's store: wait on it from runners of one journal, or give the signals different names`,
        );
      });
    }
  }
}

/**
 * Callback links across processes: a token is signed by the runner that parks the run (in its
 * `notify` payload) and checked by whichever gateway replica the link reaches. Without
 * `gateway.stream.cursorKey` each process signs with a random key of its own, so in a
 * distributed configuration (a nats system: several processes) no link would verify. A warning
 * at each signal wait that hands out links: one with `notify` (its payload carries the links) or
 * with `approvals` (decided by link, typically). Embedded, one process signs and checks: no warning.
 */
export function checkCallbackKey(settings: Settings, report: Report): void {
  if (settings.gateway.stream.cursorKey !== undefined) return;
  if (!Object.values(settings.systems).some((s) => s.type === 'nats')) return;
  for (const runner of Object.values(settings.runners)) {
    for (const saga of runner.sagas) {
      saga.steps.forEach((step, i) => {
        if (step.type !== 'wait' || step.signal === undefined) return;
        if (step.notify === undefined && step.approvals === undefined) return;
        report(
          saga.source.file,
          [...saga.source.at, 'steps', i],
          'callback links of this wait will not verify on another process: set gateway.stream.cursorKey (the same secret on every gateway and runner) so that every replica signs and checks them with one key',
          'warning',
        );
      });
    }
  }
}

/**
 * The settings `sagaway start` runs: when a runner has a wait step and no journal (embedded
 * mode only: checkWaitJournals refuses it otherwise), a SQLite journal in
 * `<config folder>/.sagaway/journal.db`. Unchanged when every such runner names its journal.
 */
export function withEmbeddedJournal(settings: Settings): Settings {
  const needing = Object.values(settings.runners).filter((r) => r.journal === undefined && hasWaits(r));
  if (needing.length === 0 || Object.hasOwn(settings.states, EMBEDDED_JOURNAL_ALIAS)) return settings;
  const state: SqliteStateSettings = {
    type: 'sqlite',
    alias: EMBEDDED_JOURNAL_ALIAS,
    file: join(settings.baseDir, EMBEDDED_JOURNAL_FILE),
    table: EMBEDDED_JOURNAL_ALIAS,
    queries: {},
  };
  const runners: Record<string, RunnerSettings> = { ...settings.runners };
  for (const r of needing) runners[r.name] = { ...r, journal: EMBEDDED_JOURNAL_ALIAS };
  return { ...settings, states: { ...settings.states, [EMBEDDED_JOURNAL_ALIAS]: state }, runners };
}
