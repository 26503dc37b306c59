#!/usr/bin/env node
// Distributed benchmark: an API whose saga runs one remote event step, through sagaway
// (gateway + orchestrating runner + worker runner, NATS JetStream), with the journal off and on,
// side by side with Moleculer 0.14 (moleculer-web + a service, NATS transporter) on the same
// NATS server. Every process is its own OS process on loopback.
//   npm run build && (cd bench/distributed && npm install) && node bench/distributed/run.mjs
//     [--seconds 10] [--connections 50] [--rounds 2] [--nats nats://127.0.0.1:4222]
//     [--pg postgres://postgres@127.0.0.1:5432/test] [--write]
// --write puts the table into BENCHMARKS.md between the distributed markers.
/* global fetch, clearTimeout */
import { fork, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..', '..');
const MAIN = join(ROOT, 'dist', 'src', 'cli', 'main.js');
const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '3' },
    nats: { type: 'string', default: 'nats://127.0.0.1:4222' },
    pg: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/test' },
    write: { type: 'boolean', default: false },
  },
});
if (!existsSync(MAIN)) throw new Error('build first: npm run build');
if (!existsSync(join(HERE, 'node_modules', 'moleculer')))
  throw new Error('install the peers: (cd bench/distributed && npm install)');

const seconds = Number(values.seconds);
const connections = Number(values.connections);
const rounds = Number(values.rounds);
const procs = [];

function freePort() {
  return import('node:net').then(
    ({ createServer }) =>
      new Promise((done) => {
        const s = createServer();
        s.listen(0, '127.0.0.1', () => {
          const { port } = s.address();
          s.close(() => done(port));
        });
      }),
  );
}

async function waitHttp(url, ms = 30_000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const r = await fetch(url).catch(() => undefined);
    if (r?.status === 200) return;
    await new Promise((d) => setTimeout(d, 100));
  }
  throw new Error(`${url} did not answer 200 within ${ms} ms`);
}

function startSagaway(args, env) {
  const child = spawn(process.execPath, [MAIN, ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  procs.push(child);
  return child;
}

function startPeer(file, env) {
  const child = fork(join(HERE, file), {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  procs.push(child);
  return new Promise((done, fail) => {
    child.once('message', () => done(child));
    child.once('exit', (code) => fail(new Error(`${file} exited with ${code}`)));
  });
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

function load(url) {
  return new Promise((done, fail) => {
    autocannon({ url, connections, duration: seconds }, (err, r) => (err ? fail(err) : done(r)));
  });
}

async function measure(name, url) {
  await new Promise((done, fail) => autocannon({ url, connections, duration: 3 }, (err) => (err ? fail(err) : done()))); // warm-up, not counted
  const load1 = loadavg()[0];
  const r = await load(url);
  const row = {
    name,
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.non2xx + r.errors + r.timeouts,
    load: load1,
  };
  console.log(
    `${name}: ${Math.round(row.rps)} req/s, p50 ${row.p50} ms, p99 ${row.p99} ms, errors ${row.errors}, load ${load1.toFixed(1)}`,
  );
  return row;
}

async function sagawayRun(label, journal) {
  const dir = mkdtempSync(join(tmpdir(), 'sagaway-bench-dist-'));
  const prefix = `bench${randomBytes(4).toString('hex')}`;
  const table = `bench_journal_${randomBytes(4).toString('hex')}`;
  writeFileSync(join(dir, 'echo.mjs'), readFileSync(join(HERE, 'echo-handler.mjs')));
  const states = journal
    ? `states:\n  journal: { type: postgres, url: "${values.pg}", table: ${table}, poolSize: 20 }\n`
    : '';
  writeFileSync(
    join(dir, 'sagaway.yaml'),
    `gateway:
  apis: [{ path: /, runner: api, public: true }]
systems:
  bus: { type: nats, servers: ["${values.nats}"], prefix: ${prefix} }
defaultSystem: bus
${states}runners:
  api:
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
  const [p1, p2] = [await freePort(), await freePort()];
  startSagaway(['runner', '--config', config, '--runner', 'api', '--port', String(p1)], {});
  startSagaway(['runner', '--config', config, '--runner', 'worker', '--port', String(p2)], {});
  await waitHttp(`http://127.0.0.1:${p1}/readyz`);
  await waitHttp(`http://127.0.0.1:${p2}/readyz`);
  const port = await freePort();
  startSagaway(['gateway', '--config', config, '--port', String(port)], {});
  await waitHttp(`http://127.0.0.1:${port}/api/request/echo?x=1`);
  try {
    return await measure(label, `http://127.0.0.1:${port}/api/request/echo?x=1`);
  } finally {
    await stopAll();
    rmSync(dir, { recursive: true, force: true });
    await dropBench(prefix, journal ? table : undefined);
  }
}

async function dropBench(prefix, table) {
  const { connect } = await import('@nats-io/transport-node');
  const { jetstreamManager } = await import('@nats-io/jetstream');
  const nc = await connect({ servers: values.nats });
  const jsm = await jetstreamManager(nc);
  for (const s of [`${prefix}_events`, `${prefix}_resp`]) await jsm.streams.delete(s).catch(() => undefined);
  await nc.close();
  if (table) {
    const pg = (await import('pg')).default;
    const c = new pg.Client({ connectionString: values.pg });
    await c.connect();
    await c.query(`drop table if exists "${table}", "${table}_idem"`);
    await c.end();
  }
}

async function moleculerRun() {
  const env = { NATS_URL: values.nats, NS: `bench${randomBytes(4).toString('hex')}` };
  await startPeer('moleculer-worker.mjs', env);
  const port = await freePort();
  await startPeer('moleculer-gateway.mjs', { ...env, PORT: String(port) });
  await waitHttp(`http://127.0.0.1:${port}/api/echo?x=1`);
  try {
    return await measure('Moleculer 0.14 + moleculer-web, NATS transporter', `http://127.0.0.1:${port}/api/echo?x=1`);
  } finally {
    await stopAll();
  }
}

process.once('SIGINT', () => stopAll().then(() => process.exit(130)));
// Rounds alternate the systems (A B C, A B C, ...) so that a busy moment of the machine does not
// fall on one system only; each system's median round is reported.
const variants = [
  () => moleculerRun(),
  () => sagawayRun('sagaway, journal off (JetStream event, core reply)', false),
  () => sagawayRun('sagaway, journal on (PostgreSQL)', true),
];
const byName = new Map();
try {
  for (let i = 0; i < rounds; i++) {
    for (const v of variants) {
      const row = await v();
      byName.set(row.name, [...(byName.get(row.name) ?? []), row]);
    }
  }
} finally {
  await stopAll();
}
const results = [...byName.values()].map((all) => {
  const sorted = [...all].sort((a, b) => a.rps - b.rps);
  return { ...sorted[Math.floor((sorted.length - 1) / 2)], all };
});
function verdict(rs) {
  const mol = rs.find((r) => r.name.startsWith('Moleculer'));
  const off = rs.find((r) => r.name.includes('journal off'));
  const on = rs.find((r) => r.name.includes('journal on'));
  if (!mol || !off || !on) return '';
  const share = Math.round((off.rps / mol.rps) * 100);
  return (
    `In this run the journal costs ${Math.round((1 - on.rps / off.rps) * 100)}% of the throughput and ${on.p50 - off.p50} ms at the median. ` +
    `The aim, at least Moleculer's throughput, is ${share >= 100 ? 'met' : `not met: sagaway without the journal reaches ${share}% of it`}.`
  );
}

const rows = results.map(
  (r) =>
    `| ${r.name} | ${Math.round(r.rps)} | ${r.p50} | ${r.p99} | ${r.errors} | ${r.all.map((x) => Math.round(x.rps)).join(', ')} |`,
);
const stamp = new Date().toISOString().slice(0, 16).replace('T', ' ');
const machine = `${availableParallelism()} CPUs (${cpus()[0]?.model.trim() ?? '?'}), load ${loadavg()
  .map((l) => l.toFixed(1))
  .join(' ')}, Node ${process.version}`;
const section = `<!-- distributed:start -->
## Distributed: one remote event step over NATS vs Moleculer

\`node bench/distributed/run.mjs --seconds ${seconds} --connections ${connections} --rounds ${rounds}\`, ${stamp} UTC, ${machine}.
GET with a query; the saga (or the Moleculer action) answers its input from another process.
sagaway runs 3 processes (gateway, orchestrating runner, worker runner), Moleculer 2 (moleculer-web, worker); all on one NATS server.
${rounds} rounds per system, interleaved, each after a 3 s warm-up; the median round is shown (latencies in ms, autocannon); the machine is shared, so compare rows of one run only.

| system | req/s | p50 | p99 | errors | req/s of each round |
|---|---:|---:|---:|---:|---|
${rows.join('\n')}

What the difference is made of. Moleculer sends a request and a response over core NATS and
keeps nothing: a worker that dies mid-call loses the call. sagaway's remote step is stored in a
JetStream stream (file storage) before it runs, acknowledged after the reply, and redelivered to
another replica if its runner dies; the gateway also reaches the orchestrating runner through
NATS (one more hop and one more process). Per request that is about twice the NATS messages plus
a stored and deleted JetStream message. The journal adds PostgreSQL writes per request (the run
record and the outcome; one more after each event step that does not end the saga), which is what
lets another process finish the saga and \`/api/status\` report it. ${verdict(results)}
<!-- distributed:end -->`;
console.log(`\n${section}`);
if (values.write) {
  const file = join(ROOT, 'BENCHMARKS.md');
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmarks\n';
  const re = /<!-- distributed:start -->[\s\S]*<!-- distributed:end -->/;
  writeFileSync(file, re.test(text) ? text.replace(re, section) : `${text.trimEnd()}\n\n${section}\n`);
  console.log(`written to ${file}`);
}
