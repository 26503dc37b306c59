import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { pgUnavailableReason } from '../states/pg-available.js';
import {
  call,
  Cluster,
  dropStreams,
  handlerLog,
  reachable,
  skipOrFail,
  uniquePrefix,
  waitUntil,
  WORK_HANDLER,
} from './harness.js';

/**
 * Waits across replicas (issue 21), on the real PostgreSQL and NATS, with real processes: a
 * gateway and two replicas of the runner share a PostgreSQL journal. Every due timer is taken by
 * exactly one replica (leases with FOR UPDATE SKIP LOCKED); a replica killed (-9) while timers
 * fire loses no run, and the steps after the wait run again only where the dead one was in the
 * middle of one (at least once, the same idempotency key).
 */

const NATS = 'nats://127.0.0.1:4222';
const PG = process.env['SAGAWAY_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const natsUp = await reachable(4222);
const pgReason = await pgUnavailableReason(PG);
const skip = !natsUp ? skipOrFail(`NATS not reachable at ${NATS}`) : pgReason ? skipOrFail(pgReason) : false;

function configFor(prefix: string, slowMs: number) {
  const local = (action: string, parameters: Record<string, unknown> = {}) => ({
    handler: 'work',
    action,
    version: 0,
    outputElement: '-',
    parameters,
  });
  return {
    gateway: { apis: [{ path: '/', runner: 'api', public: true }], limits: { timeout: '20s', rate: false } },
    // Fast liveness, polls and leases, so that a test takes seconds.
    systems: {
      bus: { type: 'nats', servers: [NATS], ackWait: '1s', maxDeliver: 5, prefix, advertiseInterval: '300ms' },
    },
    defaultSystem: 'bus',
    states: {
      jr: { type: 'postgres', url: PG, table: `${prefix}_journal` },
      ledger: { type: 'postgres', url: PG, table: `${prefix}_ledger` },
    },
    runners: {
      api: {
        journal: 'jr',
        resumeInterval: '500ms',
        waitPoll: '100ms',
        waitLease: '3s',
        handlers: ['./work.mjs'],
        sagas: [
          {
            id: 'later',
            path: '/later',
            methods: ['POST'],
            timeout: '20s',
            steps: [
              { id: 'start', type: 'start', links: [{ to: 'pause' }] },
              { id: 'pause', type: 'wait', for: '1500ms', links: [{ to: 'work' }] },
              { id: 'work', type: 'event', eventMeta: local('Slow', { ms: slowMs }), links: [{ to: 'count' }] },
              { id: 'count', type: 'event', eventMeta: local('Count'), links: [{ to: 'ok' }] },
              { id: 'ok', type: 'success' },
            ],
          },
          {
            id: 'go',
            path: '/go',
            methods: ['POST'],
            timeout: '20s',
            steps: [
              { id: 'start', type: 'start', links: [{ to: 'before' }] },
              { id: 'before', type: 'event', eventMeta: local('Slow', { ms: slowMs }), links: [{ to: 'hold' }] },
              {
                id: 'hold',
                type: 'wait',
                signal: { name: 'go' },
                timeout: '1h',
                outputElement: '$.go',
                links: [{ to: 'after', when: ['SIGNAL'] }],
              },
              { id: 'after', type: 'event', eventMeta: local('Slow', { ms: slowMs }), links: [{ to: 'count' }] },
              { id: 'count', type: 'event', eventMeta: local('Count'), links: [{ to: 'ok' }] },
              { id: 'ok', type: 'success' },
            ],
          },
        ],
      },
    },
  };
}

async function dropTables(prefix: string): Promise<void> {
  const c = new pg.Client({ connectionString: PG });
  await c.connect();
  try {
    for (const t of ['journal', 'ledger']) {
      await c.query(
        `drop table if exists "${prefix}_${t}", "${prefix}_${t}_idem", "${prefix}_${t}_waits", "${prefix}_${t}_signals"`,
      );
    }
  } finally {
    await c.end();
  }
}

/** Park `n` runs through the gateway; resolves with their run ids. */
async function park(port: number, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i += 20) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(20, n - i) }, () => call(port, '/api/request/later', { method: 'POST', body: {} })),
    );
    for (const res of batch) {
      assert.equal(res.status, 202, JSON.stringify(res.body));
      ids.push(res.headers.get('x-request-id')!);
    }
  }
  return ids;
}

async function outcomes(port: number, ids: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const id of ids) {
    const res = await call(port, `/api/status/${id}`);
    const body = res.body as { status?: string; outcome?: string };
    out.set(id, body.status === 'DONE' ? String(body.outcome) : String(body.status));
  }
  return out;
}

/** Wait until every run ended SUCCESS; on time-out, say how many are in which state. */
async function allSucceed(port: number, ids: string[], timeoutMs: number): Promise<void> {
  let last = new Map<string, string>();
  await waitUntil(
    async () => [...(last = await outcomes(port, ids)).values()].every((o) => o === 'SUCCESS'),
    timeoutMs,
    500,
  ).catch((e: Error) => {
    const tally: Record<string, number> = {};
    for (const o of last.values()) tally[o] = (tally[o] ?? 0) + 1;
    throw new Error(`${e.message}; runs by state: ${JSON.stringify(tally)}`);
  });
}

describe('waits across two replicas on PostgreSQL', { skip }, () => {
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  });

  test('100 timers due in the same second: each fires exactly once, shared by the replicas', async () => {
    const prefix = uniquePrefix('wt');
    const { stringify } = await import('yaml');
    const cluster = await Cluster.create({
      'sagaway.yaml': stringify(configFor(prefix, 10)),
      'work.mjs': WORK_HANDLER,
    });
    const log = join(cluster.dir, 'handler.log');
    cleanups.push(
      () => cluster.close(),
      () => dropStreams(NATS, prefix),
      () => dropTables(prefix),
    );
    const env = { SAGAWAY_TEST_LOG: log };
    const { port } = await cluster.gateway(env);
    await cluster.runner('api', undefined, env);
    await cluster.runner('api', undefined, env);
    const ids = await park(port, 100);
    await waitUntil(async () => (await handlerLog(log)).filter((l) => l.what === 'Count').length >= 100, 60_000, 200);
    await waitUntil(async () => [...(await outcomes(port, ids)).values()].every((o) => o === 'SUCCESS'), 30_000, 500);
    const lines = await handlerLog(log);
    for (const what of ['SlowStart', 'Count']) {
      const keys = lines.filter((l) => l.what === what).map((l) => l.key);
      assert.equal(keys.length, 100, `${what} ran once per run`);
      assert.equal(new Set(keys).size, 100);
    }
    const pids = new Set(lines.map((l) => l.pid));
    assert.ok(pids.size >= 1);
  });

  test('a replica killed (-9) while timers fire: every run still ends SUCCESS, none ran a step after its wait more than twice', async () => {
    const prefix = uniquePrefix('wk');
    const { stringify } = await import('yaml');
    const cluster = await Cluster.create({
      'sagaway.yaml': stringify(configFor(prefix, 800)),
      'work.mjs': WORK_HANDLER,
    });
    const log = join(cluster.dir, 'handler.log');
    cleanups.push(
      () => cluster.close(),
      () => dropStreams(NATS, prefix),
      () => dropTables(prefix),
    );
    const env = { SAGAWAY_TEST_LOG: log };
    const { port } = await cluster.gateway(env);
    const a = await cluster.runner('api', undefined, env);
    await cluster.runner('api', undefined, env);
    const ids = await park(port, 30);
    // the timers fire; one replica is in the middle of the slow step after a wait: kill it there
    let victim = 0;
    await waitUntil(
      async () => {
        const started = (await handlerLog(log)).filter((l) => l.what === 'SlowStart');
        victim = started[0]?.pid ?? 0;
        return victim !== 0;
      },
      30_000,
      20,
    );
    const dead = victim === a.proc.child.pid ? a.proc : cluster.procs.find((p) => p.child.pid === victim)!;
    dead.child.kill('SIGKILL');
    await allSucceed(port, ids, 90_000);
    const lines = await handlerLog(log);
    const counts = new Map<string, number>();
    for (const l of lines.filter((x) => x.what === 'SlowDone')) counts.set(l.key, (counts.get(l.key) ?? 0) + 1);
    const finals = lines.filter((l) => l.what === 'Count');
    assert.equal(new Set(finals.map((l) => l.key)).size, 30, 'every run reached its last step');
    for (const [key, n] of counts) assert.ok(n <= 2, `${key} completed ${n} times`);
    // the steps the dead replica had not begun ran once
    const restarted = new Set(lines.filter((l) => l.what === 'SlowStart' && l.pid === victim).map((l) => l.key));
    for (const l of finals)
      if (!restarted.has(l.key.replace(/:count$/, ':work')))
        assert.equal(finals.filter((f) => f.key === l.key).length, 1);
  });

  test('killed (-9) while parking, then while a signal is applied: every run parks, resumes once signalled, ends SUCCESS', async () => {
    const prefix = uniquePrefix('wg');
    const { stringify } = await import('yaml');
    const cluster = await Cluster.create({
      'sagaway.yaml': stringify(configFor(prefix, 800)),
      'work.mjs': WORK_HANDLER,
    });
    const log = join(cluster.dir, 'handler.log');
    cleanups.push(
      () => cluster.close(),
      () => dropStreams(NATS, prefix),
      () => dropTables(prefix),
    );
    const env = { SAGAWAY_TEST_LOG: log };
    const { port } = await cluster.gateway(env);
    await cluster.runner('api', undefined, env);
    await cluster.runner('api', undefined, env);
    const killSlowOwner = async (since: number) => {
      let pid = 0;
      await waitUntil(
        async () => {
          const started = (await handlerLog(log)).slice(since).filter((l) => l.what === 'SlowStart');
          pid = started[0]?.pid ?? 0;
          return pid !== 0;
        },
        30_000,
        20,
      );
      cluster.procs.find((p) => p.child.pid === pid)!.child.kill('SIGKILL');
      await cluster.runner('api', undefined, env);
    };
    // the requests are in their first step (before parking) when their replica dies
    const requests = Array.from({ length: 10 }, () => call(port, '/api/request/go', { method: 'POST', body: {} }));
    await killSlowOwner(0);
    const answers = await Promise.all(requests);
    // A request the dead replica took but had not recorded yet ran nothing (its start record comes
    // before its first step) and has no record: its caller got a 5xx. Every other run parks.
    const recorded = async () => {
      const all = await outcomes(
        port,
        answers.map((r) => r.headers.get('x-request-id')!),
      );
      return answers.filter((r) => all.get(r.headers.get('x-request-id')!) !== '404');
    };
    await waitUntil(
      async () => {
        const all = await outcomes(
          port,
          (await recorded()).map((r) => r.headers.get('x-request-id')!),
        );
        return [...all.values()].every((o) => o === 'WAITING');
      },
      60_000,
      300,
    );
    const kept = await recorded();
    const started = new Set((await handlerLog(log)).map((l) => l.key.split(':')[0]));
    for (const r of answers) {
      if (kept.includes(r)) continue;
      assert.ok(r.status >= 500, 'only a failed request has no run');
      assert.ok(!started.has(r.headers.get('x-request-id')!), 'a run without a record ran no step');
    }
    assert.ok(kept.length >= 1, `${kept.length} runs parked`);
    const ids = kept.map((r) => r.headers.get('x-request-id')!);

    const before = (await handlerLog(log)).length;
    for (const id of ids) {
      const res = await call(port, `/api/runs/${id}/signals/go`, { method: 'POST', body: { ok: true } });
      assert.equal(res.status, 202, JSON.stringify(res.body));
    }
    // a replica dies in the middle of the step after a signal
    await killSlowOwner(before);
    await allSucceed(port, ids, 90_000);
    const finals = (await handlerLog(log)).filter((l) => l.what === 'Count').map((l) => l.key);
    assert.equal(new Set(finals).size, ids.length, 'every run reached its last step');
    assert.ok(finals.length <= ids.length + 2, `the last step ran ${finals.length} times for ${ids.length} runs`);
    // A run that moved on takes no second signal: 404 once its wait row is gone, 409 WAIT_RESOLVED
    // while a row resolved by a replica killed before it removed it waits for its lease (3 s) to
    // run out and the next poller to remove it. Either way the steps after the wait do not run again.
    for (const id of ids) {
      const res = await call(port, `/api/runs/${id}/signals/go`, { method: 'POST', body: {} });
      assert.ok(res.status === 404 || res.status === 409, `a second signal: ${res.status} ${JSON.stringify(res.body)}`);
    }
    // and the left-over row is removed once its lease ran out
    await waitUntil(
      async () => {
        for (const id of ids)
          if ((await call(port, `/api/runs/${id}/signals/go`, { method: 'POST', body: {} })).status !== 404)
            return false;
        return true;
      },
      15_000,
      500,
    );
    const again = (await handlerLog(log)).filter((l) => l.what === 'Count').map((l) => l.key);
    assert.equal(again.length, finals.length, 'no second signal ran the last step again');
  });
});
