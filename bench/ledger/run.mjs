#!/usr/bin/env node
// The cost ledger of the one-shot request path: from a bare fastify route, the gateway's parts
// are added one at a time (bench/ledger/server.mjs builds each variant from sagaway's own
// modules), every variant runs at once and is measured in the same interleaved rounds
// (bench/lib/compare.mjs), and the marginal CPU µs per request of each part is printed: the
// budget of the request path. The last rows are createGateway itself (as `sagaway start` builds
// it) without and with the per-client rate limit, so the parts can be checked against the whole.
//   npm run build && node bench/ledger/run.mjs [--seconds 3] [--rounds 3] [--connections 50] [--pin] [--node 24]
// CPU µs per request (the servers' user + system time over the requests they served) is the
// steady figure; requests/s moves with the machine's load.
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { compareHttp } from '../lib/compare.mjs';
import { freePort, startService } from '../lib/proc.mjs';
import { configureRuntime, serverNode, serverNodeVersion } from '../lib/runtime.mjs';
import { ROOT } from '../lib/servers.mjs';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '50' },
    pin: { type: 'boolean', default: false },
    node: { type: 'string' },
  },
});
if (values.pin) {
  if (availableParallelism() < 2) throw new Error('--pin needs 2 CPUs (servers on 0, load on 1)');
  configureRuntime({ serverCpu: 0, loadCpu: 1 });
}
if (values.node) {
  const bin = execFileSync(join(ROOT, 'scripts', 'fetch-node.sh'), [values.node], { encoding: 'utf8' }).trim();
  configureRuntime({ node: join(bin, 'node') });
}
const log = (line) => process.stderr.write(`${line}\n`);

// Each row: its label, the server's PARTS (and env), and the row its marginal cost is taken
// against. The rate limit is off in every row but its own (the load would never reach it, but
// its bookkeeping is a cost of its own).
const BASE = 'options,reqid,admit';
const ROWS = [
  { label: 'bare fastify route', parts: '' },
  { label: "+ the gateway's fastify options", parts: 'options', after: 0 },
  { label: '+ request id and its headers', parts: 'options,reqid', after: 1 },
  { label: '+ API map and auth decision', parts: BASE, after: 2 },
  { label: '+ rate limit (alone, never reached)', parts: `${BASE},rate`, after: 3 },
  { label: '+ the saga run (one local step)', parts: `${BASE},saga`, after: 3 },
  { label: '+ negotiation and rendering', parts: `${BASE},saga,render`, after: 5 },
  { label: '+ Idempotency-Key hooks (no key sent)', parts: `${BASE},saga,render,keys`, after: 6 },
  { label: '+ metrics', parts: `${BASE},saga,render,keys,metrics`, after: 7 },
  { label: '+ access log at info (to /dev/null)', parts: `${BASE},saga,render,keys,metrics,log`, after: 8 },
  { label: 'createGateway, logs off, rate limit off', parts: 'gateway', after: 8 },
  { label: 'createGateway, logs off, rate limit on', parts: 'gateway', env: { RATE: '1' }, after: 10 },
  {
    label: 'createGateway, tracing on (100% sampled, OTLP/HTTP)',
    parts: 'gateway',
    env: { TRACING: 'sink' },
    after: 10,
  },
];

// The tracing row's spans go to a sink in this process (its CPU is not the server's).
const sink = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
});
await new Promise((r) => sink.listen(0, '127.0.0.1', r));
const sinkUrl = `http://127.0.0.1:${sink.address().port}`;
for (const row of ROWS) if (row.env?.TRACING === 'sink') row.env.TRACING = sinkUrl;

const started = Date.now();
const load = loadavg().map((x) => x.toFixed(1));
const servers = [];
try {
  const targets = [];
  for (const row of ROWS) {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/api/request/items/2`;
    const svc = await startService(row.label, serverNode(), [join(ROOT, 'bench', 'ledger', 'server.mjs')], {
      env: { PORT: String(port), PARTS: row.parts, ...row.env },
      probe: url,
      timeoutMs: 120_000,
    });
    servers.push(svc);
    targets.push({ name: row.label, url, pids: [svc.pid] });
  }
  const res = await compareHttp(targets, {
    connections: Number(values.connections),
    seconds: Number(values.seconds),
    rounds: Number(values.rounds),
    log,
  });
  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  console.log(
    `Node ${serverNodeVersion()}, load average ${load.join(' ')} at start, ${values.connections} connections, ` +
      `median of ${values.rounds} interleaved rounds of ${values.seconds} s (${minutes} min)\n`,
  );
  console.log('| part | CPU µs/req (median) | marginal | CPU µs/req (least-loaded round) | marginal | req/s |');
  console.log('|---|---|---|---|---|---|');
  ROWS.forEach((row, i) => {
    const r = res[row.label];
    const before = row.after === undefined ? undefined : res[ROWS[row.after].label];
    const vs = row.after === undefined || row.after === i - 1 ? '' : ` (vs ${row.after + 1})`;
    const diff = (key) => {
      if (!before) return '—';
      const d = r[key] - before[key];
      return `${d >= 0 ? '+' : ''}${d.toFixed(1)}${vs}`;
    };
    console.log(
      `| ${i + 1}. ${row.label} | ${r.cpuUs.toFixed(1)} | ${diff('cpuUs')} | ${r.cpuUsMin.toFixed(1)} | ${diff('cpuUsMin')} | ${Math.round(r.rps)} |`,
    );
  });
} finally {
  await Promise.all(servers.map((s) => s.stop()));
  sink.close();
}
