#!/usr/bin/env node
// npm run mutate [-- MODULE...]: Stryker on each module of scripts/mutate-modules.mjs (all when
// none is named), one after the other, at low priority. Reports: reports/mutation/MODULE.html.
//   MUTATE_CONCURRENCY=N   parallel test runs (default 2)
//   extra Stryker flags after the modules, e.g. --mutate src/saga/engine.ts:100-160
import { spawnSync } from 'node:child_process';
import { MODULES } from './mutate-modules.mjs';

const args = process.argv.slice(2);
const flagAt = args.findIndex((a) => a.startsWith('--'));
const names = flagAt < 0 ? args : args.slice(0, flagAt);
const flags = flagAt < 0 ? [] : args.slice(flagAt);
for (const n of names) {
  if (!(n in MODULES)) {
    console.error(`unknown module ${n}: one of ${Object.keys(MODULES).join(', ')}`);
    process.exit(2);
  }
}
let failed = 0;
for (const name of names.length ? names : Object.keys(MODULES)) {
  console.log(`\n== mutate ${name}`);
  const r = spawnSync('nice', ['-n', '15', 'npx', 'stryker', 'run', 'stryker.config.mjs', ...flags], {
    stdio: 'inherit',
    env: { ...process.env, MUTATE_MODULE: name },
  });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
