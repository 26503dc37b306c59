#!/usr/bin/env node
/* global fetch, performance */
// How fast the command line starts: CPU time (user + system, from /proc after the child exits,
// via /usr/bin/time) of `sagaway --version` and `sagaway validate` of the todo example, above a
// bare `node -e 0`, median of --runs runs each, interleaved so that every command sees the same
// machine state; and the wall time from launching `sagaway start` of the todo example to its first
// 200 on /healthz. CPU time is far steadier than wall time on a loaded machine.
//   node bench/cli-startup.mjs [--base DIR] [--runs 7]
// DIR is a built checkout of the code before a change; each side validates and starts its own
// checkout's todo example (the example's format may change with the code: issue 28 gave it schemas).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { cpuMsOf, freePort } from './lib/proc.mjs';
import { ROOT } from './lib/servers.mjs';

const { values } = parseArgs({
  options: { base: { type: 'string' }, runs: { type: 'string', default: '7' } },
});
const RUNS = Number(values.runs);
const todoOf = (root) => join(root, 'examples', 'todo', 'sagaway.yaml');
const sides = { after: ROOT, ...(values.base ? { before: resolve(values.base) } : {}) };
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** CPU ms (user + sys) of one run of `node args`. */
function cpuMs(args) {
  const r = spawnSync('/usr/bin/time', ['-f', '%U %S', process.execPath, ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  const [user, sys] = r.stderr.trim().split('\n').at(-1).split(' ').map(Number);
  return (user + sys) * 1000;
}

const commands = { 'node -e 0': ['-e', '0'] };
for (const [side, root] of Object.entries(sides)) {
  const main = join(root, 'dist', 'src', 'cli', 'main.js');
  commands[`${side}: --version`] = [main, '--version'];
  commands[`${side}: validate todo`] = [main, 'validate', '--config', todoOf(root)];
}
const samples = Object.fromEntries(Object.keys(commands).map((k) => [k, []]));
for (let i = 0; i < RUNS; i++) for (const [name, args] of Object.entries(commands)) samples[name].push(cpuMs(args));

/**
 * Wall ms from spawning `sagaway start` of the todo example to its first 200 on /healthz, and the
 * CPU ms the process had used by then.
 */
async function startToHealthy(root) {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'sgw-start-'));
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    [join(root, 'dist', 'src', 'cli', 'main.js'), 'start', '--config', todoOf(root), '--port', String(port)],
    { env: { ...process.env, TODO_DB: join(dir, 'todos.db'), LOG_LEVEL: 'silent' }, stdio: 'ignore' },
  );
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`sagaway start exited ${child.exitCode}`);
      const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) return { wall: performance.now() - t0, cpu: cpuMsOf(child.pid) };
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode === null ? child.once('exit', r) : r()));
    rmSync(dir, { recursive: true, force: true });
  }
}
const starts = Object.fromEntries(Object.keys(sides).map((s) => [s, []]));
for (let i = 0; i < Math.min(RUNS, 5); i++)
  for (const [side, root] of Object.entries(sides)) starts[side].push(await startToHealthy(root));

const bare = median(samples['node -e 0']);
const load = loadavg().map((x) => x.toFixed(1));
console.log(`node ${process.version}, load average ${load.join(' ')}, median of ${RUNS} runs (CPU = user + sys)\n`);
console.log('| command | CPU ms | above `node -e 0` |');
console.log('|---|---|---|');
for (const [name, xs] of Object.entries(samples)) {
  const m = median(xs);
  console.log(`| ${name} | ${m.toFixed(0)} | ${name === 'node -e 0' ? '—' : `+${(m - bare).toFixed(0)}`} |`);
}
console.log(`\n| start todo → first 200 on /healthz | wall ms | CPU ms by then |\n|---|---|---|`);
for (const [side, xs] of Object.entries(starts)) {
  const wall = median(xs.map((x) => x.wall));
  console.log(`| ${side} | ${wall.toFixed(0)} | ${median(xs.map((x) => x.cpu)).toFixed(0)} |`);
}
