#!/usr/bin/env node
// Where a one-shot request's CPU goes: `sagaway start` with bench/oneshot/sagaway.yaml under
// `node --cpu-prof`, driven like bench/request-path.mjs (GET /api/request/items/42, 50
// connections, autocannon in its own process), then the profile read by bench/lib/cpuprofile.mjs.
//   npm run build && node bench/profile-oneshot.mjs [--seconds 10] [--connections 50] [--top 25]
//                                                   [--node 24] [--keep FILE] [--markdown]
//                                                   [--server sagaway|fastify] [--pin]
// --server fastify profiles bare fastify (bench/peers/fastify-bare.mjs) the same way, to compare.
// Only the samples taken while the measured load ran count (after a 2 s warm-up; start-up and
// shut-down are left out); idle time is reported but not part of the shares. Shares are of the
// busy samples of the server process; the kernel's share of a socket write is counted in the
// function that called it. Functions of dist/ are shown at their src/*.ts line (source maps).
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { analyse } from './lib/cpuprofile.mjs';
import { httpLoad } from './lib/load.mjs';
import { cpuSplitOf, sleep } from './lib/proc.mjs';
import { configureRuntime, serverNodeVersion } from './lib/runtime.mjs';
import { peerScript, ROOT, sagawayStart } from './lib/servers.mjs';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    top: { type: 'string', default: '25' },
    node: { type: 'string' },
    keep: { type: 'string' },
    markdown: { type: 'boolean', default: false },
    server: { type: 'string', default: 'sagaway' },
    pin: { type: 'boolean', default: false },
  },
});
if (values.node) {
  const bin = execFileSync(join(ROOT, 'scripts', 'fetch-node.sh'), [values.node], { encoding: 'utf8' }).trim();
  configureRuntime({ node: join(bin, 'node') });
}
// --pin: server on CPU 0, autocannon on CPU 1. V8 samples by wall clock, so a server that shares
// its CPU with the load generator shows the wake-up of the peer (at the end of writev) as its own.
if (values.pin) configureRuntime({ serverCpu: 0, loadCpu: 1 });
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const top = Number(values.top);
const log = (line) => process.stderr.write(`${line}\n`);

const dir = mkdtempSync(join(tmpdir(), 'sagaway-profile-'));
// µs on the monotonic clock, the clock of the profile's timestamps (V8 TimeTicks, CLOCK_MONOTONIC).
const nowUs = () => Number(process.hrtime.bigint() / 1000n);
const nodeArgs = ['--cpu-prof', '--cpu-prof-dir', dir];
const fastify = values.server === 'fastify';
if (!fastify && values.server !== 'sagaway') throw new Error(`--server sagaway or fastify, not ${values.server}`);
const svc = fastify
  ? await peerScript('fastify-bare.mjs', '/items/2', { nodeArgs })
  : await sagawayStart('bench/oneshot/sagaway.yaml', { nodeArgs });
let window;
let requests;
let cpuUs;
try {
  const url = `${svc.base}${fastify ? '' : '/api/request'}/items/42`;
  log(`warm-up 2 s, then ${seconds} s at ${connections} connections: ${url}`);
  await httpLoad(url, { connections, seconds: 2 });
  const cpu0 = cpuSplitOf(svc.pid);
  const from = nowUs();
  const r = await httpLoad(url, { connections, seconds });
  window = [from, nowUs()];
  const cpu1 = cpuSplitOf(svc.pid);
  cpuUs = { user: ((cpu1.user - cpu0.user) * 1000) / r.total, sys: ((cpu1.sys - cpu0.sys) * 1000) / r.total };
  requests = r.total;
} finally {
  await svc.stop(); // SIGTERM: sagaway stops cleanly and Node writes the profile on exit
}
let file;
for (let i = 0; i < 50 && !file; i++) {
  file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) await sleep(100);
}
if (!file) throw new Error(`no .cpuprofile in ${dir}: did the server exit cleanly?\n${svc.output()}`);
const path = join(dir, file);
const profile = JSON.parse(readFileSync(path, 'utf8'));
if (values.keep) copyFileSync(path, values.keep);
rmSync(dir, { recursive: true, force: true });

let a = analyse(profile, window);
let note = '';
if (a.samples < 100) {
  // The clocks did not line up (not Linux?): all samples, start-up included.
  a = analyse(profile);
  note = ' (the load window could not be found in the profile: all samples, start-up included)';
}
const pct = (us) => `${((100 * us) / a.busyUs).toFixed(1)}%`;
const perReq = (us) => `${(us / requests).toFixed(2)}`;
const head =
  `${values.server}${values.pin ? ' (pinned: server CPU 0, load CPU 1)' : ''}, Node ${serverNodeVersion()}, ${requests.toLocaleString('en-US')} requests in ${seconds} s at ${connections} connections, ` +
  `${(cpuUs.user + cpuUs.sys).toFixed(0)} µs CPU/request (/proc: ${cpuUs.user.toFixed(0)} user + ` +
  `${cpuUs.sys.toFixed(0)} system), profile ${(a.busyUs / requests).toFixed(0)} µs/request busy, ${a.samples.toLocaleString('en-US')} busy samples; ` +
  `idle ${((100 * a.idleUs) / (a.idleUs + a.busyUs)).toFixed(0)}% of the wall time${note}`;

const tables = [];
tables.push({
  title: 'Self time by area (% of busy samples; µs per request from the profile)',
  head: ['area', 'share', 'µs/req'],
  rows: a.areas.map((x) => [x.area, pct(x.us), perReq(x.us)]),
});
tables.push({
  title: `Top ${top} functions by self time`,
  head: ['#', 'function', 'where', 'area', 'self', 'µs/req'],
  rows: a.self
    .slice(0, top)
    .map((f, i) => [i + 1, f.name, f.where, f.area ?? '(native: caller’s area)', pct(f.us), perReq(f.us)]),
});
const own = (f) => f.area?.startsWith('sagaway') || (fastify && f.area?.startsWith('bench'));
tables.push({
  title: 'sagaway functions by inclusive time (self + callees; nested ones overlap)',
  head: ['#', 'function', 'where', 'total', 'µs/req'],
  rows: a.total
    .filter(own)
    .slice(0, top)
    .map((f, i) => [i + 1, f.name, f.where, pct(f.us), perReq(f.us)]),
});
const files = new Map();
for (const f of a.self.filter(own)) {
  const file = f.where.replace(/:\d+$/, '');
  files.set(file, (files.get(file) ?? 0) + f.us);
}
tables.push({
  title: 'sagaway files by self time',
  head: ['file', 'self', 'µs/req'],
  rows: [...files]
    .sort((x, y) => y[1] - x[1])
    .slice(0, 15)
    .map(([f, us]) => [f, pct(us), perReq(us)]),
});

const out = [head, ''];
for (const t of tables) {
  out.push(values.markdown ? `**${t.title}**` : `== ${t.title}`, '');
  if (values.markdown) {
    const md = (r) => `| ${r.map((c) => String(c).replaceAll('|', '\\|')).join(' | ')} |`;
    out.push(md(t.head), `|${t.head.map(() => '---').join('|')}|`, ...t.rows.map(md));
  } else {
    const all = [t.head, ...t.rows];
    const w = t.head.map((_, i) => Math.max(...all.map((r) => String(r[i]).length)));
    const line = (r) =>
      r
        .map((c, i) => String(c).padEnd(w[i]))
        .join('  ')
        .trimEnd();
    out.push(line(t.head), ...t.rows.map(line));
  }
  out.push('');
}
process.stdout.write(`${out.join('\n')}\n`);
