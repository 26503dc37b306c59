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
  type Proc,
} from './harness.js';

/**
 * Fault injection with real processes: kill -9 a worker replica during an action, kill -9 the
 * orchestrating runner mid-saga, and restart NATS (the test's own server) under load.
 * Journal and ledger live in PostgreSQL.
 */

const NATS = 'nats://127.0.0.1:4222';
const PG = process.env['SAGAWAY_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const NATS_SERVER = '/usr/sbin/nats-server';
const natsUp = await reachable(4222);
const pgReason = await pgUnavailableReason(PG);
const skip = !natsUp ? skipOrFail(`NATS not reachable at ${NATS}`) : pgReason ? skipOrFail(pgReason) : false;

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

function configFor(prefix: string, servers: string, timeout = '10s', pgUrl = PG) {
  return {
    // Eight clients hammer one gateway from one address: no rate limit here.
    gateway: {
      auth: CLIENT_AUTH,
      apis: [{ path: '/', runner: 'api', public: true }],
      limits: { timeout, rate: false },
    },
    systems: {
      bus: {
        type: 'nats',
        servers: [servers],
        ackWait: '1s',
        maxDeliver: 5,
        prefix,
        advertiseInterval: FAST_ADVERTISE,
      },
    },
    defaultSystem: 'bus',
    states: {
      jr: { type: 'postgres', url: pgUrl, table: `${prefix}_journal` },
      ledger: { type: 'postgres', url: pgUrl, table: `${prefix}_ledger` },
    },
    runners: {
      api: {
        journal: 'jr',
        resumeInterval: FAST_RESUME,
        sagas: [
          {
            id: 'slow',
            path: '/slow',
            steps: [
              { id: 'start', type: 'start', links: [{ to: 's' }] },
              step('s', { action: 'Slow', parameters: { ms: 1500 } }, 'ok'),
              { id: 'ok', type: 'success' },
              { id: 'bad', type: 'fail' },
            ],
          },
          {
            id: 'two',
            path: '/two',
            steps: [
              { id: 'start', type: 'start', links: [{ to: 'e1' }] },
              step('e1', { action: 'Mark' }, 'e2'),
              step('e2', { action: 'Slow', parameters: { ms: 2000 } }, 'ok'),
              { id: 'ok', type: 'success' },
              { id: 'bad', type: 'fail' },
            ],
          },
          {
            id: 'quick',
            path: '/quick',
            steps: [
              { id: 'start', type: 'start', links: [{ to: 'm' }] },
              step('m', { action: 'Mark' }, 'ok'),
              { id: 'ok', type: 'success' },
              { id: 'bad', type: 'fail' },
            ],
          },
        ],
      },
      worker: { handlers: ['./work.mjs'], streams: { work: { handler: 'work' } } },
    },
  };
}

async function ledgerCount(prefix: string, keyLike: string): Promise<number> {
  const c = new pg.Client({ connectionString: PG });
  await c.connect();
  try {
    const r = await c.query(`select count(*)::int as n from "${prefix}_ledger" where id like $1`, [keyLike]);
    return (r.rows[0] as { n: number }).n;
  } finally {
    await c.end();
  }
}

async function dropTables(prefix: string): Promise<void> {
  const c = new pg.Client({ connectionString: PG });
  await c.connect();
  try {
    for (const t of ['journal', 'ledger']) {
      await c.query(`drop table if exists "${prefix}_${t}", "${prefix}_${t}_idem"`);
    }
  } finally {
    await c.end();
  }
}

async function startCluster(
  prefix: string,
  servers: string,
  timeout?: string,
  pgUrl?: string,
): Promise<{ cluster: Cluster; log: string }> {
  const { stringify } = await import('yaml');
  const cluster = await Cluster.create({
    'sagaway.yaml': stringify(configFor(prefix, servers, timeout, pgUrl)),
    'work.mjs': WORK_HANDLER,
  });
  return { cluster, log: join(cluster.dir, 'handler.log') };
}

describe('fault injection', { skip }, () => {
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  });

  test('kill -9 a worker replica during an action: redelivered to the other replica, effect applied once', async () => {
    const prefix = uniquePrefix('kw');
    const { cluster, log } = await startCluster(prefix, NATS);
    cleanups.push(
      () => cluster.close(),
      () => dropStreams(NATS, prefix),
      () => dropTables(prefix),
    );
    const env = { SAGAWAY_TEST_LOG: log };
    await cluster.runner('api', undefined, env);
    const w1 = await cluster.runner('worker', undefined, { ...env, SAGAWAY_TEST_TAG: 'w1' });
    const w2 = await cluster.runner('worker', undefined, { ...env, SAGAWAY_TEST_TAG: 'w2' });
    const { port } = await cluster.gateway();
    await waitUntil(async () => (await call(port, '/api/request/quick')).status === 200, 10_000, 100);

    const pending = call(port, '/api/request/slow');
    await waitUntil(async () => (await handlerLog(log)).some((l) => l.what === 'SlowStart'), 5000);
    const first = (await handlerLog(log)).find((l) => l.what === 'SlowStart')!;
    const victim: Proc = first.pid === w1.proc.pid ? w1.proc : w2.proc;
    await victim.kill('SIGKILL');

    const r = await pending;
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const lines = (await handlerLog(log)).filter((l) => l.key === first.key);
    const starts = lines.filter((l) => l.what === 'SlowStart');
    const dones = lines.filter((l) => l.what === 'SlowDone');
    assert.equal(starts.length, 2, 'started on the killed replica, then on the survivor');
    assert.notEqual(starts[0]!.pid, starts[1]!.pid);
    assert.equal(dones.length, 1);
    assert.notEqual(dones[0]!.pid, victim.pid);
    assert.equal(await ledgerCount(prefix, first.key), 1, 'the effect is applied once');
    console.log(`# counts: starts=${starts.length} (2 pids) dones=${dones.length} ledger=1 in ${r.ms} ms`);
  });

  test('kill -9 the orchestrating runner mid-saga: a new one resumes it from the last completed step; /api/status shows it', async () => {
    const prefix = uniquePrefix('ko');
    const { cluster, log } = await startCluster(prefix, NATS, '6s');
    cleanups.push(
      () => cluster.close(),
      () => dropStreams(NATS, prefix),
      () => dropTables(prefix),
    );
    const env = { SAGAWAY_TEST_LOG: log };
    const api = await cluster.runner('api', undefined, env);
    await cluster.runner('worker', undefined, { ...env, SAGAWAY_TEST_TAG: 'w1' });
    const { port } = await cluster.gateway();
    await waitUntil(async () => (await call(port, '/api/request/quick')).status === 200, 10_000, 100);

    const id = `${prefix}-two`;
    const pending = call(port, '/api/request/two', { headers: { ...CLIENT, 'x-request-id': id } });
    await waitUntil(
      async () => (await handlerLog(log)).some((l) => l.what === 'SlowStart' && l.key.endsWith(':e2')),
      5000,
    );
    await api.proc.kill('SIGKILL');
    const running = await call(port, `/api/status/${id}`, { headers: CLIENT });
    assert.equal(running.status, 200);
    assert.equal((running.body as { status: string }).status, 'RUNNING');

    const r = await pending;
    assert.ok([503, 504].includes(r.status), `the caller gets 503/504 (got ${r.status})`);
    // The answer names the run id (made by the gateway); the caller's own id finds the same run.
    const runId = r.headers.get('x-request-id') ?? '';
    assert.equal((r.body as { requestId: string }).requestId, runId);
    assert.equal(
      ((await call(port, `/api/status/${runId}`, { headers: CLIENT })).body as { correlationId: string }).correlationId,
      id,
    );
    await cluster.runner('api', undefined, env);
    let status: { status: string; outcome?: string; response?: unknown } = { status: 'RUNNING' };
    await waitUntil(
      async () => {
        status = (await call(port, `/api/status/${id}`, { headers: CLIENT })).body as typeof status;
        return status.status === 'DONE';
      },
      15_000,
      200,
    );
    assert.equal(status.outcome, 'SUCCESS');
    const lines = await handlerLog(log);
    const e1 = lines.filter((l) => l.what === 'Mark' && l.key.endsWith(':e1'));
    const e2 = lines.filter((l) => l.what === 'SlowStart' && l.key.endsWith(':e2'));
    assert.equal(e1.length, 1, 'the completed step is not run again');
    assert.ok(e2.length >= 2, 'the interrupted step runs again (at least once)');
    assert.equal(new Set(e2.map((l) => l.key)).size, 1, 'with the same idempotency key');
    assert.equal(await ledgerCount(prefix, `${e2[0]!.key.slice(0, -3)}:%`), 2, 'one effect per step');
    assert.deepEqual(Object.keys(status.response as object).sort(), ['e1', 'e2']);
    console.log(`# counts: e1 ran ${e1.length}x, e2 started ${e2.length}x, ledger rows 2, caller got ${r.status}`);
  });

  test(
    'restart NATS under load: requests during the outage get 503 with Retry-After, no saga is lost',
    { timeout: 90_000, skip: existsSync(NATS_SERVER) ? false : skipOrFail(`${NATS_SERVER} is not installed`) },
    async () => {
      const prefix = uniquePrefix('rn');
      const natsPort = await freePort();
      const store = await mkdtemp(join(tmpdir(), 'sagaway-nats-'));
      const startNats = (): ChildProcess =>
        spawn(NATS_SERVER, ['-a', '127.0.0.1', '-p', String(natsPort), '-js', '-sd', store], { stdio: 'ignore' });
      let nats = startNats();
      cleanups.push(async () => {
        nats.kill('SIGKILL');
        await rm(store, { recursive: true, force: true });
      });
      await waitUntil(() => reachable(natsPort), 5000);
      const servers = `nats://127.0.0.1:${natsPort}`;
      const { cluster, log } = await startCluster(prefix, servers, '4s');
      cleanups.push(
        () => cluster.close(),
        () => dropTables(prefix),
      );
      const env = { SAGAWAY_TEST_LOG: log };
      await cluster.runner('api', undefined, env);
      await cluster.runner('worker', undefined, env);
      const { port } = await cluster.gateway();
      await waitUntil(async () => (await call(port, '/api/request/quick')).status === 200, 10_000, 100);

      const results: { id: string; status: number; retryAfter: string | null; at: number }[] = [];
      let stop = false;
      const t0 = Date.now();
      const client = async (c: number) => {
        for (let i = 0; !stop; i++) {
          const id = `${prefix}-${c}-${i}`;
          try {
            const r = await call(port, '/api/request/quick', { headers: { ...CLIENT, 'x-request-id': id } });
            results.push({ id, status: r.status, retryAfter: r.headers.get('retry-after'), at: Date.now() - t0 });
            if (r.status !== 200) await new Promise((res) => setTimeout(res, 50));
          } catch {
            results.push({ id, status: 0, retryAfter: null, at: Date.now() - t0 });
          }
        }
      };
      const clients = Array.from({ length: 8 }, (_, c) => client(c));
      // load until the clients were served (20 answers), then the broker dies
      await waitUntil(() => results.filter((r) => r.status === 200).length >= 20, 30_000, 20);
      nats.kill('SIGKILL');
      await new Promise((r) => nats.once('exit', r));
      const downAt = Date.now() - t0;
      await new Promise((r) => setTimeout(r, 2000)); // the outage itself: 2 s without a broker
      nats = startNats();
      await waitUntil(() => reachable(natsPort), 5000);
      const upAt = Date.now() - t0;
      // served again after the restart: the last 20 answers all 200, all after it
      const recovered = () => {
        const last = results.slice(-20);
        return last.length === 20 && last.every((r) => r.status === 200 && r.at > upAt);
      };
      await waitUntil(recovered, 30_000, 50);
      stop = true;
      await Promise.all(clients);

      const count = (s: number) => results.filter((r) => r.status === s).length;
      const other = results.filter((r) => ![200, 503, 504].includes(r.status));
      assert.deepEqual(other, [], 'every request is answered 200, 503 or 504');
      const during = results.filter((r) => r.at > downAt + 300 && r.at < upAt);
      assert.ok(
        during.length > 0 && during.every((r) => r.status === 503),
        `requests during the outage get 503: ${JSON.stringify(during.map((r) => [r.at, r.status]))} (down ${downAt}, up ${upAt})`,
      );
      assert.ok(
        results.filter((r) => r.status === 503).every((r) => r.retryAfter === '1'),
        '503s carry Retry-After',
      );
      assert.ok(recovered(), 'work resumes after the broker returns');

      // No saga lost: every run that started ends (journal DONE); a request that never reached a runner has no record.
      const unsettled = results.filter((r) => r.status !== 200);
      const outcomes = new Map<string, number>();
      await waitUntil(
        async () => {
          for (const r of unsettled) {
            if (outcomes.has(r.id)) continue;
            const s = await call(port, `/api/status/${r.id}`, { headers: CLIENT });
            if (s.status === 404) outcomes.set(r.id, 404);
            else if ((s.body as { status: string }).status === 'DONE')
              outcomes.set(r.id, (s.body as { http: number }).http);
          }
          return outcomes.size === unsettled.length;
        },
        30_000,
        500,
      );
      const ok = count(200);
      const marks = new Set((await handlerLog(log)).filter((l) => l.what === 'Mark').map((l) => l.key)).size;
      const ledger = await ledgerCount(prefix, '%');
      assert.equal(ledger, marks, 'one ledger row per distinct step run (redeliveries applied once)');
      assert.ok(ledger >= ok, 'every 200 has its effect');
      console.log(
        `# counts: ${results.length} requests: 200=${ok} 503=${count(503)} 504=${count(504)}; ` +
          `non-200 outcomes later: ${JSON.stringify(Object.fromEntries([...new Set(outcomes.values())].map((v) => [v, [...outcomes.values()].filter((x) => x === v).length])))}; ` +
          `ledger rows=${ledger}; outage ${downAt}..${upAt} ms`,
      );
    },
  );
  test(
    'PostgreSQL (journal and ledger) down: 503 STATE_UNAVAILABLE with Retry-After, no crash, work resumes',
    {
      timeout: 90_000,
      skip: findPgBin() ? false : skipOrFail('PostgreSQL server binaries (initdb, pg_ctl) not installed'),
    },
    async () => {
      const pgOwn = await startOwnPostgres(findPgBin()!);
      cleanups.push(() => pgOwn.destroy());
      const prefix = uniquePrefix('pd');
      const { cluster, log } = await startCluster(prefix, NATS, '5s', pgOwn.url);
      cleanups.push(
        () => cluster.close(),
        () => dropStreams(NATS, prefix),
      );
      const env = { SAGAWAY_TEST_LOG: log };
      const api = await cluster.runner('api', undefined, env);
      const worker = await cluster.runner('worker', undefined, env);
      const { port } = await cluster.gateway();
      await waitUntil(async () => (await call(port, '/api/request/quick')).status === 200, 10_000, 100);

      await pgOwn.stop('immediate');
      const down = [];
      for (let i = 0; i < 5; i++) down.push(await call(port, '/api/request/quick'));
      for (const r of down) {
        assert.equal(r.status, 503, JSON.stringify(r.body));
        assert.equal((r.body as { code: string }).code, 'STATE_UNAVAILABLE');
        assert.equal(r.headers.get('retry-after'), '1');
      }
      const ready = await fetch(`http://127.0.0.1:${api.port}/readyz`);
      assert.equal(ready.status, 503, 'the runner reports its journal unreachable');

      await pgOwn.start();
      await waitUntil(async () => (await call(port, '/api/request/quick')).status === 200, 20_000, 200);
      assert.equal(api.proc.exited, false, 'the orchestrator did not crash');
      assert.equal(worker.proc.exited, false, 'the worker did not crash');
      assert.equal((await fetch(`http://127.0.0.1:${api.port}/readyz`)).status, 200);
      console.log(`# counts: 5 requests during the outage -> 5 x 503 STATE_UNAVAILABLE; after restart -> 200`);
    },
  );
  test(
    'broker down at start: processes start, answer 503 and report not ready, connect when it comes, and stop promptly without it',
    { timeout: 60_000, skip: existsSync(NATS_SERVER) ? false : skipOrFail(`${NATS_SERVER} is not installed`) },
    async () => {
      const prefix = uniquePrefix('bd');
      const natsPort = await freePort();
      const store = await mkdtemp(join(tmpdir(), 'sagaway-nats-'));
      const servers = `nats://127.0.0.1:${natsPort}`;
      const { cluster, log } = await startCluster(prefix, servers, '4s');
      cleanups.push(
        () => cluster.close(),
        () => dropTables(prefix),
        () => rm(store, { recursive: true, force: true }),
      );
      const env = { SAGAWAY_TEST_LOG: log };
      // Started by hand: cluster.runner() waits for readiness, which needs the broker.
      const api = await cluster.start('api', ['runner', '--config', cluster.config, '--runner', 'api'], env);
      const apiPort = api.lines.find((l) => l['msg'] === 'sagaway runner started')!['port'] as number;
      await cluster.start('worker', ['runner', '--config', cluster.config, '--runner', 'worker'], env);
      const { port } = await cluster.gateway();
      assert.equal((await fetch(`http://127.0.0.1:${apiPort}/readyz`)).status, 503);
      const down = await call(port, '/api/request/quick');
      assert.equal(down.status, 503);
      assert.equal((down.body as { code: string }).code, 'RUNNER_UNAVAILABLE');
      assert.equal(down.headers.get('retry-after'), '1');

      const nats = spawn(NATS_SERVER, ['-a', '127.0.0.1', '-p', String(natsPort), '-js', '-sd', store], {
        stdio: 'ignore',
      });
      cleanups.push(async () => {
        nats.kill('SIGKILL');
      });
      await waitUntil(async () => (await call(port, '/api/request/quick')).status === 200, 20_000, 200);
      assert.equal((await fetch(`http://127.0.0.1:${apiPort}/readyz`)).status, 200);

      nats.kill('SIGKILL');
      await new Promise((r) => nats.once('exit', r));
      const t = Date.now();
      await Promise.all(cluster.procs.map((p) => p.kill('SIGTERM')));
      const stopMs = Date.now() - t;
      console.log(`# counts: stopped without the broker in ${stopMs} ms`);
      assert.ok(stopMs < 8000, `every process stopped without the broker in ${stopMs} ms`);
    },
  );
});
