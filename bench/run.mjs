#!/usr/bin/env node
// The benchmark suite: `npm run bench` (builds, then runs this file).
//   node bench/run.mjs [--only oneshot,flow,sse,longpoll,remote,load,schema] [--seconds 5] [--rounds 3]
//                      [--connections 50] [--shared-clients 10000] [--no-write] [--pin]
// --only runs some workloads; BENCHMARKS.md then keeps the other workloads' rows (and says which
// run each row comes from) and replaces only the rows of those that ran.
// --pin: servers on CPU 0, load generators on CPU 1 (taskset), so that the load generator does
// not take the servers' core; other processes of the machine are not kept off either core.
// Every server under test and every load generator runs in its own process, on loopback only.
// Prints one table and writes it, with the date, the machine and this command, to the suite
// section of BENCHMARKS.md. Peers are installed on first use into bench/peers/node_modules
// (their own package.json; never the root's).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT } from './lib/servers.mjs';
import { configureRuntime } from './lib/runtime.mjs';
import { markdownRow, readSuiteSection, renderMarkdown, renderText } from './lib/table.mjs';

const WORKLOADS = ['oneshot', 'flow', 'sse', 'longpoll', 'remote', 'load', 'schema'];
const { values } = parseArgs({
  options: {
    only: { type: 'string', default: WORKLOADS.join(',') },
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '50' },
    'shared-clients': { type: 'string', default: '10000' },
    'no-write': { type: 'boolean', default: false },
    pin: { type: 'boolean', default: false },
  },
});
if (values.pin) configureRuntime({ serverCpu: 0, loadCpu: 1 });
const only = values.only.split(',').map((s) => s.trim());
for (const w of only) if (!WORKLOADS.includes(w)) throw new Error(`unknown workload "${w}" (${WORKLOADS.join(', ')})`);
const opts = {
  seconds: Number(values.seconds),
  rounds: Number(values.rounds),
  connections: Number(values.connections),
  sharedClients: Number(values['shared-clients']),
  log: (line) => process.stderr.write(`${line}\n`),
};

if (!existsSync(join(ROOT, 'dist', 'src', 'cli', 'main.js'))) throw new Error('build first: npm run build');
const peers = join(ROOT, 'bench', 'peers');
if (!existsSync(join(peers, 'node_modules'))) {
  opts.log('installing the peers into bench/peers/node_modules (once)...');
  execFileSync('npm', ['install', '--prefix', peers, '--no-audit', '--no-fund'], { stdio: 'inherit' });
}

const started = Date.now();
// The suite is bounded: past 15 minutes something is stuck; say so and stop (servers and load
// generators are children of this process and end with it).
setTimeout(() => {
  opts.log('the suite ran for 15 minutes: stopping');
  process.exit(1);
}, 15 * 60_000).unref();
const load = loadavg()[0];
const rows = [];
const notes = [];
/** per workload that ran: its rows and notes, for BENCHMARKS.md */
const ran = [];
const modules = {
  oneshot: () => import('./oneshot/run.mjs').then((m) => m.oneshot(opts)),
  flow: () => import('./flow/run.mjs').then((m) => m.flow(opts)),
  sse: () => import('./sse/run.mjs').then((m) => m.sse(opts)),
  longpoll: () => import('./longpoll/run.mjs').then((m) => m.longpoll(opts)),
  remote: () => import('./remote/run.mjs').then((m) => m.remote(opts)),
  load: () => import('./load/run.mjs').then((m) => m.load(opts)),
  schema: () => import('./schema/run.mjs').then((m) => m.schema(opts)),
};
for (const w of WORKLOADS) {
  if (!only.includes(w)) continue;
  opts.log(`== ${w}`);
  const t0 = Date.now();
  const mine = { workload: w, rows: [], notes: [] };
  try {
    const out = await modules[w]();
    // A workload returns its rows, or { rows, notes } when it has something to say.
    mine.rows = Array.isArray(out) ? out : out.rows;
    mine.notes = Array.isArray(out) ? [] : (out.notes ?? []);
  } catch (err) {
    opts.log(`${w} failed: ${err.stack ?? err}`);
    mine.notes = [`${w}: not measured in this run (${String(err.message ?? err).split('\n')[0]})`];
  }
  rows.push(...mine.rows);
  notes.push(...mine.notes);
  ran.push(mine);
  opts.log(`   ${w} took ${Math.round((Date.now() - t0) / 1000)} s`);
}

const mem = `${Math.round(totalmem() / 2 ** 30)} GiB`;
const machine = `${availableParallelism()} cores (nproc), ${mem}, Node ${process.version}, load average ${load.toFixed(1)} at start${values.pin ? ', servers pinned to CPU 0 and load to CPU 1' : ''}`;
const argv = process.argv.slice(2);
const command = argv.length ? `npm run bench -- ${argv.join(' ')}` : 'npm run bench';
const date = new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
const minutes = ((Date.now() - started) / 60000).toFixed(1);
const meta = {
  date,
  machine,
  command,
  minutes,
  opts: { seconds: opts.seconds, rounds: opts.rounds, connections: opts.connections },
};

process.stdout.write(renderText(rows, notes, meta));
if (!values['no-write']) {
  const file = join(ROOT, 'BENCHMARKS.md');
  const doc = readFileSync(file, 'utf8');
  const start = '<!-- suite:start -->';
  const end = '<!-- suite:end -->';
  const has = doc.includes(start) && doc.includes(end);
  // The workloads that did not run keep their rows from the run that measured them.
  const kept = has
    ? readSuiteSection(doc.slice(doc.indexOf(start), doc.indexOf(end)), workloadOfRow).filter(
        (g) => !only.includes(g.workload),
      )
    : [];
  const fresh = ran.map((g) => ({ workload: g.workload, meta, lines: g.rows.map(markdownRow), notes: g.notes }));
  const groups = WORKLOADS.map((w) => fresh.find((g) => g.workload === w) ?? kept.find((g) => g.workload === w)).filter(
    Boolean,
  );
  const section = renderMarkdown(groups);
  let next;
  if (has) {
    next = doc.slice(0, doc.indexOf(start)) + section + doc.slice(doc.indexOf(end) + end.length);
  } else {
    // First run: the suite's table goes first, below the intro (before the first "## ").
    const at = doc.indexOf('\n## ');
    next = at < 0 ? `${doc}\n${section}\n` : `${doc.slice(0, at + 1)}${section}\n\n${doc.slice(at + 1)}`;
  }
  writeFileSync(file, next);
  opts.log(`written to BENCHMARKS.md (${ran.map((g) => g.workload).join(', ')})`);
}

/** The workload a table row of an older section belongs to, by its first cell. */
function workloadOfRow(first) {
  if (first.startsWith('one-shot')) return 'oneshot';
  if (first.startsWith('4-step flow')) return 'flow';
  if (first.startsWith('SSE') || first.startsWith('poll cost')) return 'sse';
  if (first.startsWith('one remote step')) return 'remote';
  if (first.startsWith('worst body') || first.startsWith('one client, worst bodies')) return 'load';
  if (first.startsWith('input schema')) return 'schema';
  return undefined;
}
