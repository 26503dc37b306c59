// @ts-check
// Mutation testing, on demand only (never in CI or `npm test`): `npm run mutate` runs every module
// of scripts/mutate-modules.mjs, `npm run mutate -- cursor` one of them. See TESTING.md.
import { MODULES } from './scripts/mutate-modules.mjs';

const name = process.env.MUTATE_MODULE ?? 'cursor';
const module = MODULES[name];
if (module === undefined) throw new Error(`unknown mutate module ${name}: one of ${Object.keys(MODULES).join(', ')}`);

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  mutate: module.mutate,
  testRunner: 'command',
  // The instrumented sources (all mutants switched by __STRYKER_ACTIVE_MUTANT__) are compiled once
  // per run, in the sandbox; each mutant then only runs the module's compiled tests.
  buildCommand: 'npm run build',
  // --test-force-exit: a mutant that leaves a timer or socket open must not keep the run alive
  // until Stryker's timeout. MUTATE_TESTS (compiled test files, space-separated) runs the mutants against other tests, e.g.
  // the module's tests as they were before TESTING.md's additions.
  commandRunner: {
    command: `node --test --test-force-exit --test-concurrency=1 ${process.env.MUTATE_TESTS ?? module.tests.join(' ')}`,
  },
  coverageAnalysis: 'off',
  concurrency: Number(process.env.MUTATE_CONCURRENCY ?? 2),
  // a mutant that hangs (a loop that never ends) is cut off this long after the tests' usual time
  timeoutMS: 8000,
  tempDirName: '.stryker-tmp',
  ignorePatterns: ['dist', 'bench', 'reports', '.tmp', '*.db', '*.db-wal', '*.db-shm', 'coverage'],
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: `reports/mutation/${name}.html` },
  jsonReporter: { fileName: `reports/mutation/${name}.json` },
  clearTextReporter: { allowColor: false, logTests: false },
  thresholds: { high: 90, low: 75, break: null },
};
