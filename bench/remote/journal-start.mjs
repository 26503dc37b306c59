#!/usr/bin/env node
/* global fetch */
// Issue 26 side by side: the cost of committing a journaled run's start record before its first
// event, in the same interleaved rounds as the code before the change and the journal off.
//   node bench/remote/journal-start.mjs --base DIR [--seconds 5] [--rounds 5] [--connections 50]
// DIR is a built checkout of the code before (e.g. `git worktree add /tmp/base main && cd
// /tmp/base && npm ci && npm run build`). The workload is bench/remote's JetStream form
// (edge.yaml, edge-journal.yaml, store.yaml): GET /items/:id, one event step to the store runner
// through JetStream, journal in PostgreSQL ($BENCH_PG_URL, default 127.0.0.1:5432/test).
// NATS 127.0.0.1:4222 is the machine's; a prefix and journal tables of its own, removed after.
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { compareHttp } from '../lib/compare.mjs';
import { freePort, startService } from '../lib/proc.mjs';
import { serverNode } from '../lib/runtime.mjs';
import { ROOT } from '../lib/servers.mjs';

const { values } = parseArgs({
  options: {
    base: { type: 'string' },
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '50' },
  },
});
if (!values.base) throw new Error('--base DIR: a built checkout of the code before the change');
const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const prefix = `sgwjs${Date.now().toString(36)}`;
const env = { BENCH_PREFIX: prefix, NATS_URL: 'nats://127.0.0.1:4222', BENCH_PG_URL: PG_URL };
const log = (line) => process.stderr.write(`${line}\n`);

/** `sagaway <args>` of the checkout at `root`, with this repository's bench configs. */
async function sagaway(root, args, extraEnv = {}) {
  const port = await freePort();
  const svc = await startService(
    'sagaway',
    serverNode(),
    [join(root, 'dist', 'src', 'cli', 'main.js'), ...args, '--port', String(port)],
    { env: { ...env, ...extraEnv }, probe: `http://127.0.0.1:${port}/healthz` },
  );
  return { ...svc, base: `http://127.0.0.1:${port}` };
}

async function until200(url) {
  for (let i = 0; i < 100; i++) {
    const r = await fetch(url).catch(() => null);
    if (r?.status === 200) return;
    await new Promise((res) => setTimeout(res, 200));
  }
  throw new Error(`${url} never answered 200`);
}

const cfg = (name) => join(ROOT, 'bench', 'remote', name);
const servers = [];
const tables = [`${prefix}_after`, `${prefix}_before`];
try {
  const store = await sagaway(ROOT, ['runner', '--config', cfg('store.yaml'), '--runner', 'store']);
  servers.push(store);
  const off = await sagaway(ROOT, ['start', '--config', cfg('edge.yaml')]);
  servers.push(off);
  const after = await sagaway(ROOT, ['start', '--config', cfg('edge-journal.yaml')], {
    BENCH_JOURNAL_TABLE: tables[0],
  });
  servers.push(after);
  const before = await sagaway(values.base, ['start', '--config', cfg('edge-journal.yaml')], {
    BENCH_JOURNAL_TABLE: tables[1],
  });
  servers.push(before);
  const targets = [
    { name: 'journal off', server: off },
    { name: 'journal on, before (start record with the first write)', server: before },
    { name: 'journal on, after (start record before the first event)', server: after },
  ].map(({ name, server }) => ({ name, pids: [server.pid, store.pid], url: `${server.base}/api/request/items/42` }));
  for (const t of targets) await until200(t.url);
  const r = await compareHttp(targets, {
    seconds: Number(values.seconds),
    rounds: Number(values.rounds),
    connections: Number(values.connections),
    log,
  });
  const offRps = r['journal off'].rps;
  console.log('| form | req/s (median) | ÷ journal off | CPU µs/req (sagaway) | p99 ms |');
  console.log('|---|---|---|---|---|');
  for (const t of targets) {
    const x = r[t.name];
    console.log(
      `| ${t.name} | ${Math.round(x.rps)} | ${(x.rps / offRps).toFixed(2)}× | ${x.cpuUs.toFixed(0)} | ${x.p99} |`,
    );
  }
} finally {
  await Promise.all(servers.map((s) => s.stop()));
  const pg = (await import('pg')).default;
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  for (const t of tables) await c.query(`drop table if exists "${t}", "${t}_idem"`).catch(() => undefined);
  await c.end();
  const { connect } = await import('@nats-io/transport-node');
  const { jetstreamManager } = await import('@nats-io/jetstream');
  const nc = await connect({ servers: env.NATS_URL });
  const jsm = await jetstreamManager(nc);
  for (const name of [`${prefix}_events`, `${prefix}_resp`]) await jsm.streams.delete(name).catch(() => undefined);
  await nc.close();
}
