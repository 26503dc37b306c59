#!/usr/bin/env node
// Where the CPU of the two remote forms goes (bench/remote): each process of a pair under
// `node --cpu-prof`, driven with GET /api/request/items/42, then each profile read by
// bench/lib/cpuprofile.mjs: µs of CPU per request per process, by area, and the top functions.
//   npm run build && node bench/profile-remote.mjs [--form direct|edge|journal] [--seconds 8]
//                                                  [--connections 50] [--top 15] [--pin] [--keep DIR]
// direct: `sagaway gateway` -> core NATS -> `sagaway runner` (bench/remote/direct.yaml)
// edge:   `sagaway start` (gateway + orchestrator) -> JetStream -> `sagaway runner` (edge/store.yaml)
// journal: edge with the orchestrator's journal in PostgreSQL (edge-journal.yaml; the table is left behind)
// --keep DIR: copy each process's .cpuprofile there (for line ticks or Chrome DevTools).
// --pin: the two servers on CPU 0, autocannon on CPU 1 (the machine has 2 cores).
/* global fetch */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { analyse } from './lib/cpuprofile.mjs';
import { httpLoad } from './lib/load.mjs';
import { cpuSplitOf, sleep } from './lib/proc.mjs';
import { configureRuntime } from './lib/runtime.mjs';
import { ROOT, sagawayProcess, sagawayStart } from './lib/servers.mjs';

const { values } = parseArgs({
  options: {
    form: { type: 'string', default: 'direct' },
    seconds: { type: 'string', default: '8' },
    connections: { type: 'string', default: '50' },
    top: { type: 'string', default: '15' },
    pin: { type: 'boolean', default: false },
    keep: { type: 'string' },
  },
});
if (values.pin) configureRuntime({ serverCpu: 0, loadCpu: 1 });
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const top = Number(values.top);
const log = (line) => process.stderr.write(`${line}\n`);
const nowUs = () => Number(process.hrtime.bigint() / 1000n);
const prefix = `sgwprof${Date.now().toString(36)}`;
const env = { BENCH_PREFIX: prefix, NATS_URL: 'nats://127.0.0.1:4222', BENCH_JOURNAL_TABLE: `${prefix}_journal` };

const dirs = { a: mkdtempSync(join(tmpdir(), 'sgw-prof-a-')), b: mkdtempSync(join(tmpdir(), 'sgw-prof-b-')) };
const prof = (d) => ['--cpu-prof', '--cpu-prof-dir', d];
const procs = [];
let front;
if (values.form === 'direct') {
  const cfg = join(ROOT, 'bench/remote/direct.yaml');
  procs.push([
    'runner',
    await sagawayProcess(['runner', '--config', cfg, '--runner', 'items'], { env, nodeArgs: prof(dirs.b) }),
  ]);
  front = await sagawayProcess(['gateway', '--config', cfg], { env, nodeArgs: prof(dirs.a) });
  procs.push(['gateway', front]);
} else {
  procs.push([
    'store runner',
    await sagawayProcess(['runner', '--config', join(ROOT, 'bench/remote/store.yaml'), '--runner', 'store'], {
      env,
      nodeArgs: prof(dirs.b),
    }),
  ]);
  const config = values.form === 'journal' ? 'bench/remote/edge-journal.yaml' : 'bench/remote/edge.yaml';
  front = await sagawayStart(config, { env, nodeArgs: prof(dirs.a) });
  procs.push(['start (gateway + orchestrator)', front]);
}
const url = `${front.base}/api/request/items/42`;
let window;
let requests;
const cpu = {};
try {
  for (let i = 0; i < 100; i++) {
    const r = await fetch(url).catch(() => null);
    if (r?.status === 200) break;
    await sleep(200);
  }
  await httpLoad(url, { connections, seconds: 2 });
  const before = procs.map(([, p]) => cpuSplitOf(p.pid));
  const from = nowUs();
  const r = await httpLoad(url, { connections, seconds });
  window = [from, nowUs()];
  requests = r.total;
  procs.forEach(([name, p], i) => {
    const c = cpuSplitOf(p.pid);
    cpu[name] = ((c.user - before[i].user + c.sys - before[i].sys) * 1000) / r.total;
  });
  log(`${values.form}: ${Math.round(r.rps)} req/s, p99 ${r.p99} ms`);
} finally {
  for (const [, p] of procs) await p.stop();
}
const out = [];
for (const [[name], dir] of [
  [procs[procs.length - 1], dirs.a],
  [procs[0], dirs.b],
]) {
  let file;
  for (let i = 0; i < 50 && !file; i++) {
    file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
    if (!file) await sleep(100);
  }
  if (!file) {
    out.push(`${name}: no profile`);
    continue;
  }
  const a = analyse(JSON.parse(readFileSync(join(dir, file), 'utf8')), window);
  const perReq = (us) => (us / requests).toFixed(1);
  out.push(`== ${name}: ${cpu[name].toFixed(0)} µs CPU/request (/proc), profile ${perReq(a.busyUs)} µs/request busy`);
  out.push(
    '  by area: ' +
      a.areas
        .slice(0, 10)
        .map((x) => `${x.area} ${perReq(x.us)}`)
        .join(', '),
  );
  out.push('  top self:');
  for (const f of a.self.slice(0, top)) out.push(`    ${perReq(f.us).padStart(6)} µs  ${f.name}  ${f.where}`);
  out.push('  sagaway inclusive:');
  for (const f of a.total.filter((f) => f.area?.startsWith('sagaway')).slice(0, top))
    out.push(`    ${perReq(f.us).padStart(6)} µs  ${f.name}  ${f.where}`);
  if (values.keep) {
    mkdirSync(values.keep, { recursive: true });
    copyFileSync(join(dir, file), join(values.keep, `${name.split(' ')[0]}.cpuprofile`));
    out.push(`  kept: ${join(values.keep, `${name.split(' ')[0]}.cpuprofile`)}`);
  }
  rmSync(dir, { recursive: true, force: true });
}
console.log(`${values.form}, ${requests} requests in ${seconds} s at ${connections} connections\n${out.join('\n')}`);
