import { join } from 'node:path';
import type { Report } from '../../config/compile.js';
import type { RunnerSettings, Settings, SqliteStateSettings } from '../../config/settings.js';
import { hasWaits } from './host-waits.js';

/**
 * A saga with a `wait` step needs a journal (issue 21): a parked run lives there and nowhere
 * else. Distributed (a nats system in the file): `runners.<name>.journal` is required, and an
 * error says so at the wait step. Embedded (`sagaway start`, the test kit): without one, the
 * process keeps a SQLite journal at `.sagaway/journal.db` next to the configuration, so that
 * the first example needs no database; a warning says where.
 */

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
