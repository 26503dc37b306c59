#!/usr/bin/env node
// Issue 10's request-path targets, measured side by side in one run and printed as one table.
//   npm run build && node bench/request-path.mjs [--node 24] [--pin] [--seconds 5] [--rounds 3]
//                                               [--connections 50] [--markdown]
// Five HTTP servers run at once, each in its own process on loopback (idle ones cost no CPU):
// sagaway one-shot (bench/oneshot), bare fastify, moleculer-web one-shot, sagaway 4-step flow
// (bench/flow), moleculer-web flow. All five are measured in the same interleaved rounds
// (bench/lib/compare.mjs); the median round is reported. Then the engine alone
// (bench/engine/run.mjs --steps 1): the saga of bench/oneshot run in process, sequentially.
// CPU per request (user + system time of the server process ÷ requests) is the steady figure on
// a shared machine; requests/s is shown too. Peak RSS is VmHWM of the server after the run.
//   --node 24     every server (and the engine run) on the pinned Node 24 (scripts/fetch-node.sh);
//                 the load generator stays on this Node. The bench configs use memory states
//                 only, so better-sqlite3 (built for Node 20) is never loaded.
//   --pin         servers and the engine on CPU 0, the load generator on CPU 1 (taskset).
//   --markdown    the table as Markdown (for BENCHMARKS.md) instead of text.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { compareHttp, sameAnswers } from './lib/compare.mjs';
import { runNodeJson } from './lib/proc.mjs';
import { configureRuntime, serverNode, serverNodeVersion } from './lib/runtime.mjs';
import { peerScript, ROOT, sagawayStart } from './lib/servers.mjs';

const { values } = parseArgs({
  options: {
    node: { type: 'string' },
    pin: { type: 'boolean', default: false },
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '50' },
    'engine-seconds': { type: 'string', default: '2' },
    markdown: { type: 'boolean', default: false },
  },
});
const log = (line) => process.stderr.write(`${line}\n`);
const opts = {
  seconds: Number(values.seconds),
  rounds: Number(values.rounds),
  connections: Number(values.connections),
  log,
};

if (!existsSync(join(ROOT, 'dist', 'src', 'cli', 'main.js'))) throw new Error('build first: npm run build');
const peers = join(ROOT, 'bench', 'peers');
if (!existsSync(join(peers, 'node_modules'))) {
  log('installing the peers into bench/peers/node_modules (once)...');
  execFileSync('npm', ['install', '--prefix', peers, '--no-audit', '--no-fund'], { stdio: 'inherit' });
}
if (values.node) {
  // The same pinned binaries as the tests on other Nodes (scripts/node-versions.sh).
  const bin = execFileSync(join(ROOT, 'scripts', 'fetch-node.sh'), [values.node], { encoding: 'utf8' }).trim();
  configureRuntime({ node: join(bin, 'node') });
}
if (values.pin) {
  if (availableParallelism() < 2) throw new Error('--pin needs 2 CPUs (servers on 0, load on 1)');
  configureRuntime({ serverCpu: 0, loadCpu: 1 });
}

const started = Date.now();
// Bounded: past 10 minutes something is stuck (servers are children and end with this process).
setTimeout(() => {
  log('the request-path run took 10 minutes: stopping');
  process.exit(1);
}, 10 * 60_000).unref();
const load = loadavg()[0];

// ---- HTTP: five servers, one interleaved comparison ------------------------------------------
const servers = {};
let http;
try {
  servers['sagaway one-shot'] = await sagawayStart('bench/oneshot/sagaway.yaml');
  servers['bare fastify'] = await peerScript('fastify-bare.mjs', '/items/2');
  servers['moleculer-web one-shot'] = await peerScript('moleculer-web.mjs', '/items/2', {
    env: { WORKLOAD: 'oneshot' },
  });
  servers['sagaway flow'] = await sagawayStart('bench/flow/sagaway.yaml');
  servers['moleculer-web flow'] = await peerScript('moleculer-web.mjs', '/items/2', { env: { WORKLOAD: 'flow' } });
  const url = (name) => `${servers[name].base}${name.startsWith('sagaway') ? '/api/request' : ''}/items/42`;
  const target = (name) => ({ name, url: url(name), pids: [servers[name].pid] });
  const oneshot = ['sagaway one-shot', 'bare fastify', 'moleculer-web one-shot'].map(target);
  const flow = ['sagaway flow', 'moleculer-web flow'].map(target);
  // Equal work within each group (the one-shot answers are the item, the flow's { item, key }).
  await sameAnswers(oneshot);
  await sameAnswers(flow);
  log(`== HTTP: ${opts.rounds} interleaved rounds of ${opts.seconds} s, ${opts.connections} connections`);
  http = await compareHttp([...oneshot, ...flow], { ...opts, same: false });
} finally {
  await Promise.all(Object.values(servers).map((s) => s.stop()));
}

// ---- the engine alone ------------------------------------------------------------------------
log('== engine: 1-step saga in process');
const engine = await runNodeJson(
  join(ROOT, 'bench', 'engine', 'run.mjs'),
  ['--steps', '1', '--seconds', values['engine-seconds'], '--rounds', '3'],
  { role: 'server', node: serverNode(), timeoutMs: 120_000 },
);

// ---- the table ---------------------------------------------------------------------------------
const S = http['sagaway one-shot'];
const F = http['bare fastify'];
const M = http['moleculer-web one-shot'];
const SF = http['sagaway flow'];
const MF = http['moleculer-web flow'];
const MiB = 2 ** 20;
const p99 = (a, b) => `p99 ${a.p99} vs ${b.p99} ms`;
const ONE = 'one-shot, one local step';
const FLOW = '4-step flow';
// ratio is always sagaway ÷ peer; cmp says on which side of the target it passes. CPU rows carry
// the req/s targets' steady equivalent (1.2× the req/s = at most 1/1.2 the CPU).
const spec = [
  { w: ONE, m: 'CPU µs/req', s: S.cpuUs, p: 'bare fastify', v: F.cpuUs, cmp: '≤', t: 2, d: p99(S, F) },
  { w: ONE, m: 'req/s', s: S.rps, p: 'bare fastify', v: F.rps, cmp: '≥', t: 0.5 },
  { w: ONE, m: 'peak RSS MiB', s: S.peakRss / MiB, p: 'bare fastify', v: F.peakRss / MiB, cmp: '≤', t: 1.5 },
  { w: ONE, m: 'CPU µs/req', s: S.cpuUs, p: 'moleculer-web', v: M.cpuUs, cmp: '≤', t: 1 / 1.2, d: p99(S, M) },
  { w: ONE, m: 'req/s', s: S.rps, p: 'moleculer-web', v: M.rps, cmp: '≥', t: 1.2 },
  { w: FLOW, m: 'CPU µs/req', s: SF.cpuUs, p: 'moleculer-web', v: MF.cpuUs, cmp: '≤', t: 1, d: p99(SF, MF) },
  { w: FLOW, m: 'req/s', s: SF.rps, p: 'moleculer-web', v: MF.rps, cmp: '≥', t: 1 },
  {
    w: 'engine alone, 1-step saga',
    m: 'runs/s',
    s: engine.sagaway,
    p: 'hand-written fn',
    v: engine.handWritten,
    abs: 200_000,
  },
];
const num = (x) => (x < 1000 ? x.toFixed(x < 100 ? 1 : 0) : Math.round(x).toLocaleString('en-US'));
const rows = spec.map((r) => {
  const ratio = r.s / r.v;
  const pass = r.abs ? r.s >= r.abs : r.cmp === '≤' ? ratio <= r.t : ratio >= r.t;
  const target = r.abs ? `≥ ${r.abs.toLocaleString('en-US')}` : `${r.cmp} ${+r.t.toFixed(2)}×`;
  const shown = ratio < 0.1 ? ratio.toFixed(3) : ratio.toFixed(2);
  return [r.w, r.m, num(r.s), r.p, num(r.v), `${shown}×`, target, pass ? 'PASS' : 'MISS', r.d ?? ''];
});
const HEAD = ['workload', 'metric', 'sagaway', 'peer', 'peer figure', 'sagaway ÷ peer', 'target', 'result', 'detail'];
const minutes = ((Date.now() - started) / 60000).toFixed(1);
const argv = process.argv.slice(2).join(' ');
const meta =
  `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, servers on Node ${serverNodeVersion()}` +
  `${values.pin ? ' pinned to CPU 0 (load on CPU 1)' : ''}, ${availableParallelism()} cores, load average ` +
  `${load.toFixed(1)} at start, ${opts.connections} connections, median of ${opts.rounds} interleaved rounds of ` +
  `${opts.seconds} s; command: node bench/request-path.mjs${argv ? ` ${argv}` : ''} (${minutes} min)`;
if (values.markdown) {
  const esc = (c) => String(c).replaceAll('|', '\\|');
  const md = (r) => `| ${r.map(esc).join(' | ')} |`;
  process.stdout.write([meta, '', md(HEAD), `|${HEAD.map(() => '---').join('|')}|`, ...rows.map(md), ''].join('\n'));
} else {
  const all = [HEAD, ...rows];
  const widths = HEAD.map((_, i) => Math.max(...all.map((r) => String(r[i]).length)));
  const line = (r) =>
    r
      .map((c, i) => String(c).padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  process.stdout.write(['', meta, '', line(HEAD), rule, ...rows.map(line), ''].join('\n'));
}
