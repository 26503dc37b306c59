#!/usr/bin/env node
// Runs the compiled tests with Node's own test runner.
//   node scripts/test.mjs            every test (unit, integration, end to end)
//   node scripts/test.mjs --unit     unit tests only (no *.int.test.js, nothing under test/)
//   node scripts/test.mjs FILTER...  only files whose path contains one of the filters
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
const unitOnly = args.includes('--unit');
const filters = args.filter((a) => !a.startsWith('--'));

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (name.endsWith('.test.js')) out.push(p);
  }
  return out;
}

let files = walk('dist/src');
if (!unitOnly) files = files.concat(walk('dist/test'));
if (unitOnly) files = files.filter((f) => !f.endsWith('.int.test.js'));
if (filters.length) files = files.filter((f) => filters.some((x) => f.includes(x)));
files.sort();
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}

// Tests that start clusters of processes (test/distributed: gateways, runners, their own NATS
// and PostgreSQL servers, kill -9) run one file at a time after the rest, so that two of them
// never compete for the two cores and their timing-sensitive checks stay deterministic.
const serial = files.filter((f) => f.includes(`${join('dist', 'test', 'distributed')}`));
const parallel = files.filter((f) => !serial.includes(f));

function run(list, concurrency) {
  if (list.length === 0) return 0;
  const r = spawnSync(
    process.execPath,
    ['--test', `--test-concurrency=${concurrency}`, '--test-timeout=180000', ...list],
    { stdio: 'inherit', env: { ...process.env, NODE_ENV: 'test' } },
  );
  return r.status ?? 1;
}

const first = run(parallel, 2);
const second = run(serial, 1);
process.exit(first || second);
