#!/usr/bin/env node
// Runs the compiled tests with Node's own test runner, one file per child, and prints one line per
// file as it ends ("[ 12/277] ok  dist/src/... 1.4 s, 8 tests"), so a long run shows its progress.
// A failed file's whole output is printed after its line; `--verbose` prints every file's output.
//   node scripts/test.mjs            every test (unit, integration, end to end)
//   node scripts/test.mjs --unit     unit tests only (no *.int.test.js, nothing under test/)
//   node scripts/test.mjs FILTER...  only files whose path contains one of the filters
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Buffer } from 'node:buffer';
import { performance } from 'node:perf_hooks';

const args = process.argv.slice(2);
const unitOnly = args.includes('--unit');
const verbose = args.includes('--verbose');
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

const width = String(files.length).length;
const totals = { tests: 0, pass: 0, fail: 0, skipped: 0, todo: 0, cancelled: 0 };
const failedFiles = [];
let done = 0;

/** The counts of a TAP summary ("# pass 8"). */
function counts(output) {
  const found = {};
  for (const key of Object.keys(totals)) {
    const m = new RegExp(`^# ${key} (\\d+)$`, 'm').exec(output);
    found[key] = m ? Number(m[1]) : 0;
  }
  return found;
}

function runFile(file) {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(process.execPath, ['--test', '--test-reporter=tap', '--test-timeout=180000', file], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODE_ENV: 'test' },
    });
    const chunks = [];
    child.stdout.on('data', (c) => chunks.push(c));
    child.stderr.on('data', (c) => chunks.push(c));
    child.on('close', (code, signal) => {
      const output = Buffer.concat(chunks).toString('utf8');
      const c = counts(output);
      for (const key of Object.keys(totals)) totals[key] += c[key];
      const ok = code === 0 && c.fail === 0;
      if (!ok) failedFiles.push(file);
      done++;
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      const extra = [c.skipped && `${c.skipped} skipped`, c.fail && `${c.fail} failed`, signal && `killed by ${signal}`]
        .filter(Boolean)
        .join(', ');
      const line = `[${String(done).padStart(width)}/${files.length}] ${ok ? 'ok    ' : 'FAILED'} ${file}  ${seconds} s, ${c.tests} tests${extra ? `, ${extra}` : ''}`;
      console.log(line);
      if (!ok || verbose) process.stdout.write(output.endsWith('\n') ? output : `${output}\n`);
      resolve();
    });
  });
}

async function run(list, concurrency) {
  const queue = [...list];
  const worker = async () => {
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) await runFile(file);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, list.length) }, worker));
}

const began = performance.now();
await run(parallel, 2);
await run(serial, 1);
const minutes = (performance.now() - began) / 60000;
console.log(
  `\n${files.length} files, ${totals.tests} tests: ${totals.pass} passed, ${totals.fail} failed, ` +
    `${totals.skipped} skipped, ${totals.cancelled} cancelled, in ${minutes.toFixed(1)} min`,
);
if (failedFiles.length) {
  console.log(`failed files:\n${failedFiles.map((f) => `  ${f}`).join('\n')}`);
  process.exit(1);
}
