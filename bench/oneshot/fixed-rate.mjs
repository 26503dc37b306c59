#!/usr/bin/env node
// The one-shot request's CPU at one fixed request rate, several builds side by side (issue 23):
// `sagaway start` of bench/oneshot for each built checkout named, and bare fastify with --fastify,
// all served pinned to CPU 0 and loaded from CPU 1 at the same rate (autocannon --overallRate),
// in interleaved rounds. At a fixed rate every server handles the same requests per second, so
// CPU µs per request does not move with how fast each one goes (under unbounded load a faster
// server batches more per wake-up and looks cheaper still); the paired ratio to the first build
// is taken round by round.
//   npm run build && node bench/oneshot/fixed-rate.mjs [--rate 8000] [--seconds 2] [--rounds 10]
//                                                       [--fastify] [--node PATH] DIR...
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { cpuSplitOf, freePort, runNodeJson, startService } from '../lib/proc.mjs';
import { configureRuntime, serverNode, serverNodeVersion } from '../lib/runtime.mjs';
import { ROOT } from '../lib/servers.mjs';

const require = createRequire(import.meta.url);
const AUTOCANNON = require.resolve('autocannon/autocannon.js');
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    rate: { type: 'string', default: '8000' },
    seconds: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '10' },
    fastify: { type: 'boolean', default: false },
    node: { type: 'string' },
  },
});
configureRuntime({ serverCpu: 0, loadCpu: 1, ...(values.node ? { node: values.node } : {}) });
const servers = [];
const targets = [];
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const load = (url, seconds) =>
  runNodeJson(AUTOCANNON, ['-j', '-c', '50', '-d', String(seconds), '--overallRate', values.rate, url], {
    timeoutMs: 60_000,
  });
try {
  for (const root of positionals) {
    const port = await freePort();
    const cli = join(root, 'dist', 'src', 'cli', 'main.js');
    const config = join(ROOT, 'bench', 'oneshot', 'sagaway.yaml');
    const svc = await startService(
      'sagaway',
      serverNode(),
      [cli, 'start', '--config', config, '--port', String(port)],
      {
        env: { LOG_LEVEL: 'silent' },
        probe: `http://127.0.0.1:${port}/healthz`,
      },
    );
    servers.push(svc);
    targets.push({ name: root, url: `http://127.0.0.1:${port}/api/request/items/42`, pid: svc.pid, cpu: [], sys: [] });
  }
  if (values.fastify) {
    const port = await freePort();
    const svc = await startService('fastify', serverNode(), [join(ROOT, 'bench', 'peers', 'fastify-bare.mjs')], {
      env: { PORT: String(port) },
      probe: `http://127.0.0.1:${port}/items/42`,
    });
    servers.push(svc);
    targets.push({ name: 'bare fastify', url: `http://127.0.0.1:${port}/items/42`, pid: svc.pid, cpu: [], sys: [] });
  }
  for (const t of targets) await load(t.url, 1);
  for (let r = 0; r < Number(values.rounds); r++) {
    for (const t of r % 2 ? [...targets].reverse() : targets) {
      const a = cpuSplitOf(t.pid);
      const res = await load(t.url, Number(values.seconds));
      const b = cpuSplitOf(t.pid);
      if (res.non2xx || res.errors) throw new Error(`${t.name}: ${res.non2xx} non-2xx, ${res.errors} errors`);
      t.cpu.push(((b.user + b.sys - a.user - a.sys) * 1000) / res.requests.total);
      t.sys.push(((b.sys - a.sys) * 1000) / res.requests.total);
    }
    process.stderr.write(`round ${r + 1}: ${targets.map((t) => t.cpu.at(-1).toFixed(1)).join('  ')}\n`);
  }
  console.log(`Node ${serverNodeVersion()}, ${values.rate} req/s, ${values.rounds} rounds of ${values.seconds} s`);
  console.log('| server | CPU µs/req (median) | of which system | paired ratio to the first |');
  console.log('| --- | --: | --: | --: |');
  for (const t of targets) {
    const ratio = median(t.cpu.map((v, i) => v / targets[0].cpu[i]));
    console.log(`| ${t.name} | ${median(t.cpu).toFixed(1)} | ${median(t.sys).toFixed(1)} | ${ratio.toFixed(2)}× |`);
  }
} finally {
  await Promise.all(servers.map((s) => s.stop()));
}
