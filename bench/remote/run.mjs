// Workload "one remote step over a broker": GET /items/:id, the Map read done by another
// process reached through a broker, the same read as the one-shot workload.
//   sagaway, JetStream event   `sagaway start` (gateway + orchestrating runner) -> JetStream ->
//                              `sagaway runner --runner store` (edge.yaml, store.yaml)
//   sagaway, gateway -> runner `sagaway gateway` -> core NATS request/reply -> `sagaway runner`
//                              running the saga with a local step (direct.yaml)
//   sagaway, journal on        the JetStream event form with runner api journaled in PostgreSQL
//                              127.0.0.1:5432/test (edge-journal.yaml), against the same form
//                              without the journal, in the same interleaved rounds
//   Moleculer 0.14             moleculer-web node -> NATS transporter -> items node
//   BullMQ                     fastify + FlowProducer (parent + child job) -> Redis -> workers
//   Restate 1.x                ingress -> restate-server -> HTTP/2 -> service, step in ctx.run
//                              (measured in its own network namespace, see restate-netns.mjs)
// NATS 127.0.0.1:4222 and Redis 127.0.0.1:6379 are the machine's; every run uses its own
// prefix/namespace and removes what it created.
/* global fetch */
import { spawn } from 'node:child_process';
import { connect as tcp } from 'node:net';
import { join } from 'node:path';
import { compareHttp } from '../lib/compare.mjs';
import { sleep, track } from '../lib/proc.mjs';
import { peerScript, ROOT, sagawayProcess, sagawayStart } from '../lib/servers.mjs';

const NATS_URL = 'nats://127.0.0.1:4222';
const PG_URL = 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = 'redis://127.0.0.1:6379';

const reachable = (port) =>
  new Promise((resolve) => {
    const s = tcp({ port, host: '127.0.0.1' });
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });

/** Waits until `url` answers 200 (runners found through the broker's advertisements). */
async function until200(url) {
  for (let i = 0; i < 100; i++) {
    const r = await fetch(url).catch(() => null);
    if (r?.status === 200) return;
    await sleep(200);
  }
  throw new Error(`${url} never answered 200`);
}

/** Removes the JetStream streams of `prefix` (best effort). */
async function dropStreams(prefix) {
  const { connect } = await import('@nats-io/transport-node');
  const { jetstreamManager } = await import('@nats-io/jetstream');
  const nc = await connect({ servers: NATS_URL });
  try {
    const jsm = await jetstreamManager(nc);
    for (const name of [`${prefix}_events`, `${prefix}_resp`]) await jsm.streams.delete(name).catch(() => undefined);
  } finally {
    await nc.close();
  }
}

/** Removes the journal table of a run (best effort). */
async function dropTable(table) {
  const pg = (await import('pg')).default;
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  try {
    await c.query(`drop table if exists "${table}", "${table}_idem"`);
  } finally {
    await c.end();
  }
}

function restateInNetns(opts) {
  return new Promise((resolve, reject) => {
    const args = ['-n', process.execPath, join(ROOT, 'bench', 'remote', 'restate-netns.mjs')];
    args.push(
      '--seconds',
      String(opts.seconds),
      '--rounds',
      String(opts.rounds),
      '--connections',
      String(opts.connections),
    );
    const child = track(spawn('unshare', args, { stdio: ['ignore', 'pipe', 'pipe'] }));
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err = (err + d).slice(-1500)));
    child.once('error', reject);
    child.once('exit', (code) => {
      try {
        if (code !== 0) throw new Error(`exit ${code}`);
        resolve(JSON.parse(out.trim().split('\n').pop()));
      } catch (e) {
        reject(new Error(`${e.message}: ${err.split('\n').slice(-4).join(' ')}`));
      }
    });
  });
}

/** Rows of the suite table for this workload. */
export async function remote(opts) {
  const notes = [];
  const prefix = `sgwbench${Date.now().toString(36)}`;
  const natsUp = await reachable(4222);
  const redisUp = await reachable(6379);
  const pgUp = await reachable(5432);
  const journalTable = `${prefix}_journal`;
  if (!pgUp) notes.push('remote step: PostgreSQL is not running on 127.0.0.1:5432; the journal not measured');
  if (!natsUp) notes.push('remote step: NATS is not running on 127.0.0.1:4222; sagaway and Moleculer not measured');
  if (!redisUp) notes.push('remote step: Redis is not running on 127.0.0.1:6379; BullMQ not measured');
  const servers = [];
  const targets = [];
  const env = {
    BENCH_PREFIX: prefix,
    NATS_URL,
    NATS: NATS_URL,
    NAMESPACE: prefix,
    REDIS_URL,
    QUEUE_PREFIX: prefix,
    BENCH_PG_URL: PG_URL,
    BENCH_JOURNAL_TABLE: journalTable,
  };
  try {
    // Each group is two processes; a group that fails to start is left out with a note.
    const group = async (name, start) => {
      try {
        await start();
      } catch (err) {
        notes.push(`remote step: ${name} did not start, left out: ${String(err.message).split('\n')[0]}`);
      }
    };
    if (natsUp) {
      await group('sagaway (JetStream event)', async () => {
        const store = await sagawayProcess(
          ['runner', '--config', join(ROOT, 'bench/remote/store.yaml'), '--runner', 'store'],
          { env },
        );
        servers.push(store);
        const edge = await sagawayStart('bench/remote/edge.yaml', { env });
        servers.push(edge);
        await until200(`${edge.base}/api/request/items/42`);
        targets.push({
          name: 'sagaway (JetStream event)',
          pids: [edge.pid, store.pid],
          url: `${edge.base}/api/request/items/42`,
        });
        if (pgUp) {
          await group('sagaway (JetStream event, journal on)', async () => {
            const journaled = await sagawayStart('bench/remote/edge-journal.yaml', { env });
            servers.push(journaled);
            await until200(`${journaled.base}/api/request/items/42`);
            targets.push({
              name: 'sagaway (JetStream event, journal on)',
              pids: [journaled.pid, store.pid],
              url: `${journaled.base}/api/request/items/42`,
            });
          });
        }
      });
      await group('sagaway (gateway → runner)', async () => {
        const runner = await sagawayProcess(
          ['runner', '--config', join(ROOT, 'bench/remote/direct.yaml'), '--runner', 'items'],
          { env },
        );
        servers.push(runner);
        const gateway = await sagawayProcess(['gateway', '--config', join(ROOT, 'bench/remote/direct.yaml')], { env });
        servers.push(gateway);
        await until200(`${gateway.base}/api/request/items/42`);
        targets.push({
          name: 'sagaway (gateway → runner)',
          pids: [gateway.pid, runner.pid],
          url: `${gateway.base}/api/request/items/42`,
        });
      });
      await group('Moleculer over NATS', async () => {
        const node = await peerScript('moleculer-node.mjs', '/', { env, probe: false });
        servers.push(node);
        const web = await peerScript('moleculer-web.mjs', '/items/2', { env: { ...env, WORKLOAD: 'remote' } });
        servers.push(web);
        targets.push({ name: 'Moleculer over NATS', pids: [web.pid, node.pid], url: `${web.base}/items/42` });
      });
    }
    if (redisUp) {
      await group('BullMQ flow', async () => {
        const worker = await peerScript('bullmq-worker.mjs', '/', { env, probe: false });
        servers.push(worker);
        const api = await peerScript('bullmq-api.mjs', '/items/2', { env });
        servers.push(api);
        targets.push({ name: 'BullMQ flow', pids: [api.pid, worker.pid], url: `${api.base}/items/42` });
      });
    }
    const r = targets.length ? await compareHttp(targets, opts) : {};
    await Promise.all(servers.map((s) => s.stop()));
    servers.length = 0;

    try {
      r['Restate 1.x'] = await restateInNetns(opts);
      opts.log(`  Restate 1.x: ${Math.round(r['Restate 1.x'].rps)} req/s (rounds ${r['Restate 1.x'].all.join(', ')})`);
    } catch (err) {
      notes.push(`remote step: Restate not measured (${err.message})`);
    }

    const rows = [];
    const row = (mine, peer, target) => {
      if (!r[mine] || !r[peer]) return;
      rows.push({
        workload: `one remote step, sagaway ${mine.replace('sagaway (', '').replace(')', '')}`,
        metric: 'req/s',
        sagaway: r[mine].rps,
        peer,
        peerValue: r[peer].rps,
        ratio: r[mine].rps / r[peer].rps,
        target,
        detail: `CPU/req ${r[mine].cpuUs.toFixed(0)} vs ${r[peer].cpuUs.toFixed(0)} µs; p99 ${r[mine].p99} vs ${r[peer].p99} ms`,
      });
    };
    // CPU per request counts the processes of each side: sagaway's two, Moleculer's two nodes,
    // BullMQ's API and worker, Restate's server and service; not the NATS or Redis servers.
    // The journal's cost: the same form with and without it, in the same rounds (issue 13: ≥ 0.7×).
    const on = 'sagaway (JetStream event, journal on)';
    const off = 'sagaway (JetStream event)';
    if (r[on] && r[off]) {
      rows.push({
        workload: 'one remote step, sagaway JetStream event, journal on (PostgreSQL)',
        metric: 'req/s',
        sagaway: r[on].rps,
        peer: 'the same, journal off',
        peerValue: r[off].rps,
        ratio: r[on].rps / r[off].rps,
        target: 0.7,
        detail: `CPU/req ${r[on].cpuUs.toFixed(0)} vs ${r[off].cpuUs.toFixed(0)} µs (sagaway processes only; PostgreSQL's own CPU not counted); p99 ${r[on].p99} vs ${r[off].p99} ms`,
      });
    }
    row(on, 'Moleculer over NATS', undefined);
    row(on, 'BullMQ flow', undefined);
    row(on, 'Restate 1.x', undefined);
    row('sagaway (JetStream event)', 'Moleculer over NATS', 0.6);
    row('sagaway (JetStream event)', 'BullMQ flow', 2);
    row('sagaway (JetStream event)', 'Restate 1.x', undefined);
    row('sagaway (gateway → runner)', 'Moleculer over NATS', 1);
    row('sagaway (gateway → runner)', 'BullMQ flow', 2);
    row('sagaway (gateway → runner)', 'Restate 1.x', undefined);
    return { rows, notes };
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    if (natsUp) await dropStreams(prefix).catch(() => undefined);
    if (pgUp) await dropTable(journalTable).catch(() => undefined);
  }
}
