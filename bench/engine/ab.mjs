#!/usr/bin/env node
/* global performance */
// The saga run alone, this checkout against another build, side by side: CPU µs per run of the
// sagas of bench/oneshot (one local event step) and bench/flow (transform, event, condition,
// success), run in process through the Host as the gateway calls it (a SagaRequest with its
// Cancel, 50 runs in flight), without HTTP. On a loaded machine the socket path's figures swing
// with the load generator's share of the CPU; these do not need one.
//   npm run build && node bench/engine/ab.mjs --base DIR [--seconds 3] [--rounds 5] [--only oneshot,flow]
// DIR is a built checkout of the code before (as bench/before-after.mjs). Each figure is one
// child process; the sides alternate round by round; the table shows the medians.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT } from '../lib/servers.mjs';

const { values } = parseArgs({
  options: {
    base: { type: 'string' },
    root: { type: 'string' },
    saga: { type: 'string' },
    seconds: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '5' },
    only: { type: 'string', default: 'oneshot,flow' },
  },
});
const seconds = Number(values.seconds);

if (values.root) {
  // child: one build, one saga; prints {us, runs}
  process.stdout.write(JSON.stringify(await measure(resolve(values.root), values.saga)) + '\n');
  process.exit(0);
}
if (!values.base) throw new Error('--base DIR: a built checkout of the code before the change');
const sides = [
  ['before', resolve(values.base)],
  ['after', ROOT],
];
const rows = [];
for (const saga of values.only.split(',')) {
  const figures = { before: [], after: [] };
  for (let r = 0; r < Number(values.rounds); r++) {
    for (const [name, root] of r % 2 === 0 ? sides : [...sides].reverse()) {
      const out = execFileSync(
        process.execPath,
        [new URL(import.meta.url).pathname, '--root', root, '--saga', saga, '--seconds', String(seconds)],
        { encoding: 'utf8' },
      );
      const f = JSON.parse(out);
      figures[name].push(f.us);
      process.stderr.write(`  round ${r + 1} ${saga} ${name}: ${f.us.toFixed(2)} µs CPU/run (${f.runs} runs)\n`);
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const b = median(figures.before);
  const a = median(figures.after);
  rows.push(`| ${saga} | ${b.toFixed(1)} | ${a.toFixed(1)} | ${(a / b).toFixed(2)}× |`);
}
console.log('| saga (in process, 50 in flight) | CPU µs/run before | after | after ÷ before |');
console.log('| --- | --: | --: | --: |');
for (const row of rows) console.log(row);

/** CPU µs per run of one saga on the build at `root`, for `seconds` after a 1 s warm-up. */
async function measure(root, saga) {
  const { startTestHost } = await import(join(root, 'dist', 'src', 'testing', 'index.js'));
  const { Cancel } = await import(join(root, 'dist', 'src', 'core', 'cancel.js'));
  const { parse } = await import('yaml');
  const config = parse(readFileSync(join(ROOT, 'bench', saga, 'sagaway.yaml'), 'utf8'));
  delete config.gateway;
  config.runners.bench.handlers = ['./items-handler.mjs'];
  const handler = readFileSync(join(ROOT, 'bench', 'oneshot', 'items-handler.mjs'), 'utf8').replace(
    '../lib/items.cjs',
    join(ROOT, 'bench', 'lib', 'items.cjs'),
  );
  const h = await startTestHost(config, { files: { 'items-handler.mjs': handler } });
  let n = 0;
  const one = () => {
    const id = String((n++ % 500) * 2); // even ids: active items
    return h.host.run('bench', {
      method: 'GET',
      path: `/items/${id}`,
      input: {},
      query: {},
      requestId: `r${n}`,
      runId: `r${n}`,
      user: { sub: 'anonymous', roles: [], claims: {}, anonymous: true, kind: 'anonymous' },
      caller: 'anon:127.0.0.1',
      deadline: Date.now() + 10_000,
      cancel: new Cancel(),
    });
  };
  const batch = async () => {
    const results = await Promise.all(Array.from({ length: 50 }, one));
    for (const r of results) if (r.outcome !== 'SUCCESS') throw new Error(`unexpected ${JSON.stringify(r)}`);
  };
  const loop = async (s) => {
    const end = performance.now() + s * 1000;
    let runs = 0;
    while (performance.now() < end) {
      await batch();
      runs += 50;
    }
    return runs;
  };
  await loop(1);
  const c0 = process.cpuUsage();
  const runs = await loop(seconds);
  const c = process.cpuUsage(c0);
  await h.close();
  return { us: (c.user + c.system) / runs, runs };
}
