import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { findPgBin, startOwnPostgres } from '../states/own-postgres.js';
import { pgUnavailableReason } from '../states/pg-available.js';
import {
  call,
  CLIENT,
  CLIENT_AUTH,
  Cluster,
  dropStreams,
  freePort,
  handlerLog,
  reachable,
  skipOrFail,
  uniquePrefix,
  waitUntil,
  WORK_HANDLER,
} from './harness.js';

/**
 * Issue 26 items 1–3 and its "Also", with real processes, NATS and PostgreSQL: an outcome the
 * journal did not take is never answered 2xx and is written when the database returns; an
 * Idempotency-Key whose answer was lost (broker killed) or whose gateway died stays bound to its
 * run, and the retry is answered from that run; a fast failure where nothing ran is not stored.
 */

const NATS = 'nats://127.0.0.1:4222';
const PG = process.env['SAGAWAY_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const NATS_SERVER = '/usr/sbin/nats-server';
const natsUp = await reachable(4222);
const pgReason = await pgUnavailableReason(PG);
const skip = !natsUp ? skipOrFail(`NATS not reachable at ${NATS}`) : pgReason ? skipOrFail(pgReason) : false;
const noNatsServer = existsSync(NATS_SERVER) ? false : skipOrFail(`${NATS_SERVER} is not installed`);
const noPgBin = findPgBin() ? false : skipOrFail('PostgreSQL server binaries (initdb, pg_ctl) not installed');

/** Fast advertisements and journal scans, so a dead process is noticed within about a second (systems.bus.advertiseInterval, runners.api.resumeInterval). */
const FAST_ADVERTISE = '300ms';
const FAST_RESUME = '500ms';

function step(id: string, meta: Record<string, unknown>, next: string) {
  return {
    id,
    type: 'event',
    eventMeta: { handler: 'work', version: 0, stream: 'work', outputElement: `$.${id}`, ...meta },
    links: [
      { to: next, when: ['SUCCESS'] },
      { to: 'bad', when: ['*'] },
    ],
  };
}

/** One saga per path, POST only (keys apply to POST), ending at `ok` or `bad`. */
function saga(id: string, steps: Record<string, unknown>[]) {
  const first = steps[0]!['id'] as string;
  return {
    id,
    path: `/${id}`,
    methods: ['POST'],
    steps: [
      { id: 'start', type: 'start', links: [{ to: first }] },
      ...steps,
      { id: 'ok', type: 'success' },
      { id: 'bad', type: 'fail' },
    ],
  };
}

function configFor(prefix: string, nats: string, journalUrl: string | undefined) {
  return {
    gateway: {
      auth: CLIENT_AUTH,
      apis: [{ path: '/', runner: 'api', public: true }],
      limits: { timeout: '10s', rate: false },
      idempotency: { state: 'keys' },
    },
    systems: {
      bus: { type: 'nats', servers: [nats], ackWait: '1s', maxDeliver: 5, prefix, advertiseInterval: FAST_ADVERTISE },
    },
    defaultSystem: 'bus',
    states: {
      jr: { type: 'postgres', url: journalUrl ?? PG, table: `${prefix}_journal` },
      ledger: { type: 'postgres', url: PG, table: `${prefix}_ledger` },
      keys: { type: 'postgres', url: PG, table: `${prefix}_keys` },
    },
    runners: {
      api: {
        ...(journalUrl !== undefined ? { journal: 'jr' } : {}),
        resumeInterval: FAST_RESUME,
        sagas: [
          saga('slow', [step('s', { action: 'Slow', parameters: { ms: 2000 } }, 'ok')]),
          saga('two', [
            step('e1', { action: 'Mark' }, 'e2'),
            step('e2', { action: 'Slow', parameters: { ms: 2000 } }, 'ok'),
          ]),
          saga('quick', [step('m', { action: 'Mark' }, 'ok')]),
        ],
      },
      worker: { handlers: ['./work.mjs'], streams: { work: { handler: 'work' } } },
    },
  };
}

async function dropTables(prefix: string): Promise<void> {
  const c = new pg.Client({ connectionString: PG });
  await c.connect();
  try {
    for (const t of ['journal', 'ledger', 'keys', 'keys_reqkeys'])
      await c.query(`drop table if exists "${prefix}_${t}"`);
  } finally {
    await c.end();
  }
}

/** `journalUrl` null: the runner keeps no journal (its outcomes go to the NATS bucket). */
async function startCluster(
  prefix: string,
  nats: string,
  journalUrl: string | null = PG,
): Promise<{ cluster: Cluster; log: string }> {
  const { stringify } = await import('yaml');
  const cluster = await Cluster.create({
    'sagaway.yaml': stringify(configFor(prefix, nats, journalUrl ?? undefined)),
    'work.mjs': WORK_HANDLER,
  });
  return { cluster, log: join(cluster.dir, 'handler.log') };
}

/** A keyed POST as the test's API-key client (its runs are found at /api/status by run id). */
function post(port: number, path: string, key: string) {
  return call(port, `/api/request${path}`, {
    method: 'POST',
    headers: { ...CLIENT, 'idempotency-key': key },
    body: { order: key },
  });
}

/** The run ids (the part of `<runId>:<stepId>` before the step) that started a Slow step. */
async function slowRuns(log: string): Promise<Set<string>> {
  const lines = await handlerLog(log);
  return new Set(lines.filter((l) => l.what === 'SlowStart').map((l) => l.key.slice(0, l.key.lastIndexOf(':'))));
}

/** Our own NATS server, to kill and restart. */
async function ownNats(): Promise<{
  url: string;
  kill(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}> {
  const port = await freePort();
  const store = await mkdtemp(join(tmpdir(), 'sagaway-nats-'));
  let proc: ChildProcess | undefined;
  const start = async () => {
    proc = spawn(NATS_SERVER, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', store], { stdio: 'ignore' });
    await waitUntil(() => reachable(port), 5000);
  };
  const kill = async () => {
    const p = proc;
    if (!p || p.exitCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGKILL');
    await exited;
  };
  await start();
  return {
    url: `nats://127.0.0.1:${port}`,
    kill,
    start,
    async destroy() {
      await kill();
      await rm(store, { recursive: true, force: true });
    },
  };
}

describe('faults around Idempotency-Keys and the journal (issue 26)', { skip }, () => {
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  });

  test(
    'item 1: the journal down when the outcome is written: 503 STATE_UNAVAILABLE, never 200; the outcome is written when it returns',
    { timeout: 90_000, skip: noPgBin },
    async () => {
      const own = await startOwnPostgres(findPgBin()!);
      cleanups.push(() => own.destroy());
      const prefix = uniquePrefix('k1');
      const { cluster, log } = await startCluster(prefix, NATS, own.url);
      cleanups.push(
        () => cluster.close(),
        () => dropStreams(NATS, prefix),
        () => dropTables(prefix),
      );
      const env = { SAGAWAY_TEST_LOG: log };
      const api = await cluster.runner('api', undefined, env);
      await cluster.runner('worker', undefined, env);
      const { port } = await cluster.gateway();
      await waitUntil(async () => (await post(port, '/quick', `warm-${Date.now()}`)).status === 200, 10_000, 100);

      const pending = call(port, '/api/request/two', { method: 'POST', headers: CLIENT, body: {} });
      // e1's record (with the start record) is written before e2 is sent: the run is journaled
      await waitUntil(
        async () => (await handlerLog(log)).some((l) => l.what === 'SlowStart' && l.key.endsWith(':e2')),
        10_000,
      );
      await own.stop('immediate');
      const r = await pending;
      assert.equal(r.status, 503, `no 2xx without the outcome journaled: ${JSON.stringify(r.body)}`);
      assert.equal((r.body as { code: string }).code, 'STATE_UNAVAILABLE');
      assert.ok(
        (await handlerLog(log)).some((l) => l.what === 'SlowDone'),
        'the saga itself succeeded',
      );
      const runId = r.headers.get('x-request-id')!;

      await own.start();
      // written by the runner's retries (nothing else touches the run: its owner is alive)
      let status: { status?: string; outcome?: string; http?: number } = {};
      await waitUntil(
        async () => {
          const s = await call(port, `/api/status/${runId}`, { headers: CLIENT });
          status = s.status === 200 ? (s.body as typeof status) : {};
          return status.status === 'DONE';
        },
        30_000,
        200,
      );
      assert.equal(status.outcome, 'SUCCESS');
      assert.equal(status.http, 200);
      assert.equal(api.proc.exited, false, 'the owner lives on: no orphan scan took the run');
      assert.ok(
        api.proc.lines.some((l) => l['msg'] === 'saga outcome journaled after a retry'),
        'the owner wrote it',
      );
      console.log(
        `# counts: caller got ${r.status} ${(r.body as { code: string }).code}; /api/status later DONE ${status.outcome}`,
      );
    },
  );

  for (const journal of [true, false]) {
    test(
      `item 2${journal ? '' : ' (no journal: the outcome bucket)'}: NATS killed while a keyed run is in flight: the 503 keeps the key bound, the retry replays that run (run once)`,
      { timeout: 90_000, skip: noNatsServer },
      async () => {
        const nats = await ownNats();
        cleanups.push(() => nats.destroy());
        const prefix = uniquePrefix('k2');
        const { cluster, log } = await startCluster(prefix, nats.url, journal ? PG : null);
        cleanups.push(
          () => cluster.close(),
          () => dropTables(prefix),
        );
        const env = { SAGAWAY_TEST_LOG: log };
        await cluster.runner('api', undefined, env);
        await cluster.runner('worker', undefined, env);
        const { port } = await cluster.gateway();
        await waitUntil(async () => (await post(port, '/quick', `warm-${Date.now()}`)).status === 200, 10_000, 100);

        const key = `${prefix}-order-1`;
        const pending = post(port, '/slow', key);
        await waitUntil(async () => (await slowRuns(log)).size === 1, 10_000);
        await nats.kill();
        const first = await pending;
        assert.equal(first.status, 503, JSON.stringify(first.body));
        assert.equal((first.body as { code: string }).code, 'RUNNER_UNAVAILABLE');
        await nats.start();

        // The client retries as a client does: 503 and 409 are "try again".
        let retry = first;
        await waitUntil(
          async () => {
            retry = await post(port, '/slow', key);
            return retry.status !== 503 && retry.status !== 409;
          },
          45_000,
          250,
        );
        assert.equal(retry.status, 200, JSON.stringify(retry.body));
        assert.equal(retry.headers.get('idempotent-replayed'), 'true', 'answered from the first run');
        const runs = await slowRuns(log);
        assert.deepEqual([...runs], [first.headers.get('x-request-id')], 'one run for the key: the first one');
        const again = await post(port, '/slow', key);
        assert.equal(again.status, 200);
        assert.deepEqual(again.body, retry.body, 'the replay is stored');
        console.log(`# counts: first 503, retry ${retry.status} replayed; runs for the key: ${runs.size}`);
      },
    );
  }

  test(
    'item 3: a gateway killed mid-run: the retry on the other gateway waits for the first run and replays it, no 20 s lock',
    { timeout: 90_000 },
    async () => {
      const prefix = uniquePrefix('k3');
      const { cluster, log } = await startCluster(prefix, NATS);
      cleanups.push(
        () => cluster.close(),
        () => dropStreams(NATS, prefix),
        () => dropTables(prefix),
      );
      const env = { SAGAWAY_TEST_LOG: log };
      await cluster.runner('api', undefined, env);
      await cluster.runner('worker', undefined, env);
      const gw1 = await cluster.gateway();
      const gw2 = await cluster.gateway();
      await waitUntil(async () => (await post(gw2.port, '/quick', `warm-${Date.now()}`)).status === 200, 10_000, 100);

      const key = `${prefix}-order-1`;
      const lost = post(gw1.port, '/slow', key).catch((err: unknown) => err);
      await waitUntil(async () => (await slowRuns(log)).size === 1, 10_000);
      await gw1.proc.kill('SIGKILL');
      assert.ok((await lost) instanceof Error, 'the first client lost its answer');

      const retry = await post(gw2.port, '/slow', key);
      assert.equal(
        retry.status,
        200,
        `${JSON.stringify(retry.body)} after ${retry.ms} ms; ${JSON.stringify(gw2.proc.lines.filter((l) => l['level'] !== 30 || String(l['msg']).includes('idem')).slice(-10))}`,
      );
      assert.equal(retry.headers.get('idempotent-replayed'), 'true');
      assert.equal((await slowRuns(log)).size, 1, 'the saga ran once');
      // the lock (timeout 10 s + 10 s) is not what ended the wait: the run's end did
      assert.ok(retry.ms < 10_000, `answered when the run ended, in ${retry.ms} ms`);

      // once the outcome is known, a retry is answered at once from the store
      const again = await post(gw2.port, '/slow', key);
      assert.equal(again.status, 200);
      assert.deepEqual(again.body, retry.body);
      assert.ok(again.ms * 4 < retry.ms, `a known outcome is replayed at once (${again.ms} ms)`);
      console.log(`# counts: retry on the other gateway replayed in ${retry.ms} ms, again in ${again.ms} ms; runs: 1`);
    },
  );

  test(
    'also: a fast 503 where nothing ran (no runner consumes the stream) is not stored: the retry runs',
    { timeout: 60_000 },
    async () => {
      const prefix = uniquePrefix('k4');
      const { cluster, log } = await startCluster(prefix, NATS);
      cleanups.push(
        () => cluster.close(),
        () => dropStreams(NATS, prefix),
        () => dropTables(prefix),
      );
      const env = { SAGAWAY_TEST_LOG: log };
      await cluster.runner('api', undefined, env);
      const { port } = await cluster.gateway();
      const key = `${prefix}-order-1`;
      let first = await post(port, '/quick', key);
      // the runner may still be starting (no responders: also nothing ran, also not stored)
      await waitUntil(
        async () => {
          first = await post(port, '/quick', key);
          return first.status === 503 && /stream/.test(String((first.body as { detail?: string }).detail));
        },
        10_000,
        200,
      );
      assert.equal((first.body as { code: string }).code, 'RUNNER_UNAVAILABLE');
      await cluster.runner('worker', undefined, env);
      let retry = first;
      await waitUntil(
        async () => {
          retry = await post(port, '/quick', key);
          return retry.status === 200;
        },
        10_000,
        200,
      );
      assert.equal(retry.headers.get('idempotent-replayed'), null, 'run, not replayed');
      assert.equal((await handlerLog(log)).filter((l) => l.what === 'Mark').length, 1);
      const again = await post(port, '/quick', key);
      assert.equal(again.headers.get('idempotent-replayed'), 'true', 'the success is stored');
    },
  );
});
