#!/usr/bin/env node
/* global fetch */
// A change against the code before it, side by side in one run: the request path (one-shot with
// one local step, the 4-step flow) and the remote hop (one event step to a runner through
// JetStream), each served by this checkout and by the checkout at --base at the same time and
// measured in the same interleaved rounds (bench/lib/compare.mjs).
//   node bench/before-after.mjs --base DIR [--only oneshot,flow,remote] [--seconds 5] [--rounds 3]
//                               [--connections 50] [--pin]
// DIR is a built checkout of the code before (`git worktree add DIR <commit>`, copy or install
// node_modules, `npm run build` there). Both sides use THIS checkout's bench configs, so the
// workload is the same. The remote form needs NATS on 127.0.0.1:4222 and uses a prefix of its own.
// Prints CPU µs per request and requests/s of each side and the ratio after ÷ before.
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { compareHttp } from './lib/compare.mjs';
import { freePort, startService } from './lib/proc.mjs';
import { configureRuntime, serverNode } from './lib/runtime.mjs';
import { ROOT } from './lib/servers.mjs';

const { values } = parseArgs({
  options: {
    base: { type: 'string' },
    only: { type: 'string', default: 'oneshot,flow,remote' },
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '50' },
    pin: { type: 'boolean', default: false },
  },
});
if (!values.base) throw new Error('--base DIR: a built checkout of the code before the change');
if (values.pin) {
  if (availableParallelism() < 2) throw new Error('--pin needs 2 CPUs (servers on 0, load on 1)');
  configureRuntime({ serverCpu: 0, loadCpu: 1 });
}
const BASE = resolve(values.base);
const log = (line) => process.stderr.write(`${line}\n`);
const run = `sgwba${Date.now().toString(36)}`;

/**
 * `sagaway <args>` of the checkout at `root`, logs off, with this repository's bench configs. Each
 * side has a JetStream prefix of its own, so that one side's runner never takes the other's events.
 */
async function sagaway(root, args, side) {
  const env = { BENCH_PREFIX: `${run}${side}`, NATS_URL: 'nats://127.0.0.1:4222' };
  const port = await freePort();
  const svc = await startService(
    'sagaway',
    serverNode(),
    [join(root, 'dist', 'src', 'cli', 'main.js'), ...args, '--port', String(port)],
    { env, probe: `http://127.0.0.1:${port}/healthz` },
  );
  return { ...svc, base: `http://127.0.0.1:${port}` };
}

const cfg = (path) => join(ROOT, 'bench', path);
const WORKLOADS = {
  oneshot: { edge: ['start', '--config', cfg('oneshot/sagaway.yaml')] },
  flow: { edge: ['start', '--config', cfg('flow/sagaway.yaml')] },
  remote: {
    edge: ['start', '--config', cfg('remote/edge.yaml')],
    runner: ['runner', '--config', cfg('remote/store.yaml'), '--runner', 'store'],
  },
};

const servers = [];
const targets = [];
try {
  for (const name of values.only.split(',').map((s) => s.trim())) {
    const w = WORKLOADS[name];
    if (!w) throw new Error(`unknown workload "${name}" (${Object.keys(WORKLOADS).join(', ')})`);
    for (const [side, root] of [
      ['before', BASE],
      ['after', ROOT],
    ]) {
      // Each side has its own runner, so that the hop measured is that side's code end to end.
      const runner = w.runner ? await sagaway(root, w.runner, side) : undefined;
      const edge = await sagaway(root, w.edge, side);
      servers.push(edge, ...(runner ? [runner] : []));
      targets.push({
        name: `${name} ${side}`,
        url: `${edge.base}/api/request/items/42`,
        pids: [edge.pid, ...(runner ? [runner.pid] : [])],
      });
    }
  }
  for (const t of targets) {
    const res = await fetch(t.url);
    if (res.status !== 200) throw new Error(`${t.name} answered ${res.status}: ${await res.text()}`);
  }
  const r = await compareHttp(targets, {
    seconds: Number(values.seconds),
    rounds: Number(values.rounds),
    connections: Number(values.connections),
    same: false,
    log,
  });
  const lines = ['| workload | CPU µs/req before | after | after ÷ before | req/s before | after | after ÷ before |'];
  lines.push('| --- | --: | --: | --: | --: | --: | --: |');
  for (const name of values.only.split(',').map((s) => s.trim())) {
    const b = r[`${name} before`];
    const a = r[`${name} after`];
    lines.push(
      `| ${name} | ${b.cpuUs.toFixed(0)} | ${a.cpuUs.toFixed(0)} | ${(a.cpuUs / b.cpuUs).toFixed(2)}× | ` +
        `${Math.round(b.rps)} | ${Math.round(a.rps)} | ${(a.rps / b.rps).toFixed(2)}× |`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  await Promise.all(servers.map((s) => s.stop()));
}
