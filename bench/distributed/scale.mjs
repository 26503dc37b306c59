#!/usr/bin/env node
// Capacity model check (docs/performance.md, "Capacity model"): one remote event step through
// gateway -> orchestrating runner `api` (core NATS) -> worker (JetStream), with 1 and then 2
// replicas of `api`, each variant in the same run, on a NATS server of its own (so that its CPU
// can be read). For every process it reads the CPU time spent while the load ran (/proc), so the
// model's inputs (CPU per request of each process) come from the same run as the measured change.
// Also: outcomes off (statusTtl 0) and a PostgreSQL journal, to price a KV write and a journal write.
// Rounds alternate the variants (A B C D, A B C D, ...) and each variant's median round is used.
//   npm run build && node bench/distributed/scale.mjs [--seconds 5] [--rounds 3] [--connections 32]
//     [--pg postgres://postgres@127.0.0.1:5432/test] [--no-journal]
/* global fetch, clearTimeout, performance */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';

const HERE = dirname(fileURLToPath(import.meta.url));
const MAIN = join(resolve(HERE, '..', '..'), 'dist', 'src', 'cli', 'main.js');
const NATS_SERVER = process.env.NATS_SERVER ?? '/usr/sbin/nats-server';
const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
    pg: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/test' },
    'no-journal': { type: 'boolean', default: false },
  },
});
if (!existsSync(MAIN)) throw new Error('build first: npm run build');
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const TICK_US = 10_000; // /proc times are in clock ticks of 10 ms (CLK_TCK 100)
const procs = [];

const freePort = async () => {
  const { createServer } = await import('node:net');
  return new Promise((done) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => done(port));
    });
  });
};

async function waitHttp(url, ms = 30_000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if ((await fetch(url).catch(() => undefined))?.status === 200) return;
    await new Promise((d) => setTimeout(d, 100));
  }
  throw new Error(`${url} did not answer 200 within ${ms} ms`);
}

/** CPU time (user + system) of a process so far, in µs. */
function cpuUs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_US;
}

function start(cmd, args, quiet = false) {
  const child = spawn(cmd, args, {
    env: { ...process.env, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', quiet ? 'ignore' : 'inherit'],
  });
  procs.push(child);
  return child;
}

async function stopAll() {
  await Promise.all(
    procs.splice(0).map(
      (p) =>
        new Promise((done) => {
          if (p.exitCode !== null) return done();
          const t = setTimeout(() => p.kill('SIGKILL'), 5000);
          p.once('exit', () => {
            clearTimeout(t);
            done();
          });
          p.kill('SIGTERM');
        }),
    ),
  );
}

const load = (url, duration) =>
  new Promise((done, fail) => autocannon({ url, connections, duration }, (e, r) => (e ? fail(e) : done(r))));

/** One variant: its own NATS server and processes; req/s and CPU µs per request of each process. */
async function variant(label, { replicas, statusTtl = '24h', journal = false }) {
  const dir = mkdtempSync(join(tmpdir(), 'sagaway-scale-'));
  const natsPort = await freePort();
  const nats = start(NATS_SERVER, ['-a', '127.0.0.1', '-p', String(natsPort), '-js', '-sd', join(dir, 'js')], true);
  const table = `bench_scale_${randomBytes(4).toString('hex')}`;
  writeFileSync(join(dir, 'echo.mjs'), readFileSync(join(HERE, 'echo-handler.mjs')));
  writeFileSync(
    join(dir, 'sagaway.yaml'),
    `gateway:
  apis: [{ path: /, runner: api, public: true }]
  limits: { rate: false }
systems:
  bus: { type: nats, servers: ["nats://127.0.0.1:${natsPort}"], prefix: scale }
defaultSystem: bus
${journal ? `states:\n  journal: { type: postgres, url: "${values.pg}", table: ${table}, poolSize: 20 }\n` : ''}runners:
  api:
    statusTtl: ${statusTtl}
${journal ? '    journal: journal\n' : ''}    sagas:
      - id: echo
        path: /echo
        steps:
          - { id: start, type: start, links: [{ to: e }] }
          - id: e
            type: event
            eventMeta: { handler: echo, action: Echo, version: 0, stream: work, inputElement: parameters, outputElement: $.out }
            links: [{ to: ok }]
          - { id: ok, type: success }
  worker:
    handlers: [./echo.mjs]
    streams: { work: { handler: echo } }
`,
  );
  const config = join(dir, 'sagaway.yaml');
  try {
    const named = [['nats-server', nats]];
    const ports = [];
    for (let i = 0; i < replicas; i++) ports.push(['api', await freePort()]);
    ports.push(['worker', await freePort()]);
    for (const [runner, port] of ports) {
      named.push([
        runner,
        start(process.execPath, [MAIN, 'runner', '--config', config, '--runner', runner, '--port', String(port)]),
      ]);
    }
    for (const [, port] of ports) await waitHttp(`http://127.0.0.1:${port}/readyz`);
    const port = await freePort();
    named.push(['gateway', start(process.execPath, [MAIN, 'gateway', '--config', config, '--port', String(port)])]);
    const url = `http://127.0.0.1:${port}/api/request/echo?x=1`;
    await waitHttp(url);
    await load(url, 2); // warm-up, not counted
    const before = named.map(([, p]) => cpuUs(p.pid));
    const self0 = process.cpuUsage();
    const t0 = performance.now();
    const r = await load(url, seconds);
    const wallUs = (performance.now() - t0) * 1000;
    const selfUs = process.cpuUsage(self0);
    const after = named.map(([, p]) => cpuUs(p.pid));
    const n = r.requests.total;
    const per = {};
    named.forEach(([name], i) => (per[name] = (per[name] ?? 0) + (after[i] - before[i]) / n));
    per['load generator'] = (selfUs.user + selfUs.system) / n;
    // the cores the processes actually got while the load ran (the machine is shared)
    const obtained = (Object.values(per).reduce((a, b) => a + b, 0) * n) / wallUs;
    const row = {
      label,
      replicas,
      rps: r.requests.average,
      p50: r.latency.p50,
      errors: r.non2xx + r.errors,
      per,
      obtained,
    };
    console.log(
      `${label}: ${Math.round(row.rps)} req/s, p50 ${row.p50} ms, errors ${row.errors}, cores obtained ${obtained.toFixed(2)}; CPU µs/request: ${Object.entries(
        per,
      )
        .map(([k, v]) => `${k} ${Math.round(v)}`)
        .join(', ')}`,
    );
    return row;
  } finally {
    await stopAll();
    rmSync(dir, { recursive: true, force: true });
    if (journal) {
      const pg = (await import('pg')).default;
      const c = new pg.Client({ connectionString: values.pg });
      await c.connect();
      await c.query(`drop table if exists "${table}", "${table}_idem"`);
      await c.end();
    }
  }
}

/**
 * The model: each Node process is one thread (at most 1 core), so a stage of k replicas serves at
 * most k / (its CPU per request) requests per second; all processes together (NATS and the load
 * generator included) share the machine's cores. Throughput is the smallest of those bounds.
 */
function predict(one, replicas, cores) {
  const p = one.per;
  const total = Object.values(p).reduce((a, b) => a + b, 0);
  const bounds = {
    gateway: 1e6 / p.gateway,
    [`api ×${replicas}`]: (replicas * 1e6) / p.api,
    worker: 1e6 / p.worker,
    'nats-server': 1e6 / p['nats-server'], // it has threads, but the bench machine has 2 cores
    [`machine (${cores} cores)`]: (cores * 1e6) / total,
  };
  const [limit, rps] = Object.entries(bounds).sort((a, b) => a[1] - b[1])[0];
  return { rps, limit, bounds, total };
}

process.once('SIGINT', () => stopAll().then(() => process.exit(130)));
const cores = availableParallelism();
const variants = [
  ['api ×1', { replicas: 1 }],
  ['api ×2', { replicas: 2 }],
  ['api ×1, outcomes off (statusTtl 0)', { replicas: 1, statusTtl: '0' }],
  ...(values['no-journal'] ? [] : [['api ×1, PostgreSQL journal', { replicas: 1, journal: true }]]),
];
const rounds = new Map(variants.map(([label]) => [label, []]));
for (let i = 0; i < Number(values.rounds); i++) {
  for (const [label, opts] of variants) rounds.get(label).push(await variant(label, opts));
}
const median = (label) => {
  const all = [...(rounds.get(label) ?? [])].sort((a, b) => a.rps - b.rps);
  return all.length ? { ...all[Math.floor((all.length - 1) / 2)], all } : undefined;
};
const [one, two, noKv, withJournal] = variants.map(([label]) => median(label));

const model1 = predict(one, 1, cores);
const model2 = predict(one, 2, cores);
const fmt = (x) => Math.round(x).toLocaleString('en');
const obtained = predict(one, 2, one.obtained);
console.log(`
median rounds: ${[one, two, noKv, withJournal]
  .filter(Boolean)
  .map((r) => `${r.label} ${fmt(r.rps)} req/s (rounds ${r.all.map((x) => fmt(x.rps)).join(', ')})`)
  .join('; ')}
machine: ${cores} cores, load ${loadavg()
  .map((l) => l.toFixed(1))
  .join(' ')}, Node ${process.version}
model inputs (api ×1 run), CPU µs per request: ${Object.entries(one.per)
  .map(([k, v]) => `${k} ${fmt(v)}`)
  .join(', ')}; total ${fmt(model1.total)}
bounds for 1 replica:  ${Object.entries(model1.bounds)
  .map(([k, v]) => `${k} ${fmt(v)}`)
  .join(', ')} -> ${fmt(model1.rps)} req/s (${model1.limit})
bounds for 2 replicas: ${Object.entries(model2.bounds)
  .map(([k, v]) => `${k} ${fmt(v)}`)
  .join(', ')} -> ${fmt(model2.rps)} req/s (${model2.limit})
with the ${one.obtained.toFixed(2)} cores the processes obtained in the api ×1 run: 2 replicas -> ${fmt(obtained.rps)} req/s (${obtained.limit})
predicted change 1 -> 2 replicas: ×${(model2.rps / model1.rps).toFixed(2)}; measured: ×${(two.rps / one.rps).toFixed(2)} (${fmt(one.rps)} -> ${fmt(two.rps)} req/s)
outcome writes (2 KV puts per request): api ${fmt(one.per.api - noKv.per.api)} µs, nats-server ${fmt(one.per['nats-server'] - noKv.per['nats-server'])} µs per request; throughput ×${(one.rps / noKv.rps).toFixed(2)} of outcomes off`);
if (withJournal) {
  console.log(
    `journal on PostgreSQL (2 writes per request, no KV puts): api ${fmt(withJournal.per.api - noKv.per.api)} µs per request more than outcomes off (PostgreSQL's own CPU not counted); throughput ×${(withJournal.rps / noKv.rps).toFixed(2)} of outcomes off`,
  );
}
