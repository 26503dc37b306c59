import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { pgUnavailableReason } from '../states/pg-available.js';
import {
  call,
  CLIENT,
  CLIENT_AUTH,
  Cluster,
  dropStreams,
  handlerLog,
  reachable,
  skipOrFail,
  uniquePrefix,
  waitUntil,
} from './harness.js';

/**
 * Compensation across processes (issue 12), on the real NATS and PostgreSQL: the orchestrating
 * runner is killed (-9) while it undoes a failed saga; a new one takes the run over from the
 * journal and goes on with the undos that had not ended, so every undo's effect happens once
 * and the steps themselves are not run again.
 */

const NATS = 'nats://127.0.0.1:4222';
const PG = process.env['SAGAWAY_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const natsUp = await reachable(4222);
const pgReason = await pgUnavailableReason(PG);
const skip = !natsUp ? skipOrFail(`NATS not reachable at ${NATS}`) : pgReason ? skipOrFail(pgReason) : false;

/** Fast advertisements and journal scans, so a dead process is noticed within about a second (systems.bus.advertiseInterval, runners.api.resumeInterval). */
const FAST_ADVERTISE = '300ms';
const FAST_RESUME = '500ms';

/** Each action notes what it did in $SAGAWAY_TEST_LOG; effects are ledger rows keyed by the idempotency key. */
const STOCK_HANDLER = `
import { appendFileSync } from 'node:fs';
const note = (what, ctx) => appendFileSync(process.env.SAGAWAY_TEST_LOG, JSON.stringify({ what, tag: '', pid: process.pid, key: ctx.idempotencyKey }) + '\\n');
const sleep = (ms, signal) => new Promise((r) => { const t = setTimeout(r, ms); signal.addEventListener('abort', () => { clearTimeout(t); r(); }); });
const effect = (ctx, data) => ctx.state('ledger').create(ctx.idempotencyKey, data, { idempotencyKey: ctx.idempotencyKey });
export default {
  name: 'stock',
  actions: {
    Take: { 0: async (input, ctx) => { note('Take', ctx); await effect(ctx, { took: true }); return { taken: ctx.idempotencyKey }; } },
    Give: {
      0: async (input, ctx) => {
        note('GiveStart', ctx);
        await sleep(ctx.parameters.ms ?? 0, ctx.signal);
        await effect(ctx, { gave: input });
        note('GiveDone', ctx);
        return { given: true };
      },
    },
    Refuse: { 0: (input, ctx) => { note('Refuse', ctx); return ctx.fail('CARD_DECLINED', 'declined', 402); } },
  },
};
`;

function take(id: string, next: string, ms: number) {
  return {
    id,
    type: 'event',
    eventMeta: { handler: 'stock', action: 'Take', version: 0, stream: 'stock', outputElement: `$.${id}` },
    compensate: {
      eventMeta: {
        handler: 'stock',
        action: 'Give',
        version: 0,
        stream: 'stock',
        inputElement: id,
        parameters: { ms },
      },
    },
    links: [{ to: next, when: ['SUCCESS'] }],
  };
}

function configFor(prefix: string) {
  return {
    gateway: {
      auth: CLIENT_AUTH,
      apis: [{ path: '/', runner: 'api', public: true }],
      limits: { timeout: '4s', rate: false },
    },
    systems: {
      bus: { type: 'nats', servers: [NATS], ackWait: '1s', maxDeliver: 5, prefix, advertiseInterval: FAST_ADVERTISE },
    },
    defaultSystem: 'bus',
    states: {
      jr: { type: 'postgres', url: PG, table: `${prefix}_journal` },
      ledger: { type: 'postgres', url: PG, table: `${prefix}_ledger` },
    },
    runners: {
      api: {
        journal: 'jr',
        resumeInterval: FAST_RESUME,
        sagas: [
          {
            id: 'ping',
            path: '/ping',
            steps: [
              { id: 'start', type: 'start', links: [{ to: 'ok' }] },
              { id: 'ok', type: 'success' },
            ],
          },
          {
            id: 'order',
            path: '/order',
            methods: ['POST'],
            // the undos' budget (the caller waits at most the gateway's 4s)
            timeout: '15s',
            steps: [
              { id: 'start', type: 'start', links: [{ to: 'a' }] },
              take('a', 'b', 0),
              take('b', 'c', 0),
              // c's undo is slow: the orchestrator is killed while it runs
              take('c', 'pay', 1500),
              {
                id: 'pay',
                type: 'event',
                eventMeta: { handler: 'stock', action: 'Refuse', version: 0, stream: 'stock' },
                links: [{ to: 'ok', when: ['SUCCESS'] }],
              },
              { id: 'ok', type: 'success' },
            ],
          },
        ],
      },
      worker: { handlers: ['./stock.mjs'], streams: { stock: { handler: 'stock' } } },
    },
  };
}

async function ledgerKeys(prefix: string): Promise<string[]> {
  const c = new pg.Client({ connectionString: PG });
  await c.connect();
  try {
    const r = await c.query(`select id from "${prefix}_ledger" order by id`);
    return r.rows.map((row: { id: string }) => row.id);
  } finally {
    await c.end();
  }
}

async function dropTables(prefix: string): Promise<void> {
  const c = new pg.Client({ connectionString: PG });
  await c.connect();
  try {
    for (const t of ['journal', 'ledger'])
      await c.query(`drop table if exists "${prefix}_${t}", "${prefix}_${t}_idem"`);
  } finally {
    await c.end();
  }
}

describe('compensation across processes', { skip }, () => {
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  });

  test('kill -9 of the orchestrator mid-unwind: the unwind resumes after restart and each undo happens once', async () => {
    const prefix = uniquePrefix('uw');
    const { stringify } = await import('yaml');
    const cluster = await Cluster.create({ 'sagaway.yaml': stringify(configFor(prefix)), 'stock.mjs': STOCK_HANDLER });
    const log = join(cluster.dir, 'handler.log');
    cleanups.push(
      () => cluster.close(),
      () => dropStreams(NATS, prefix),
      () => dropTables(prefix),
    );
    const env = { SAGAWAY_TEST_LOG: log };
    const [api, , { port }] = await Promise.all([
      cluster.runner('api', undefined, env),
      cluster.runner('worker', undefined, env),
      cluster.gateway(),
    ]);

    await waitUntil(async () => (await call(port, '/api/request/ping')).status === 200, 10_000, 100);
    const id = `${prefix}-order`;
    const pending = call(port, '/api/request/order', {
      method: 'POST',
      body: { sku: 'X' },
      headers: { ...CLIENT, 'x-request-id': id },
    });
    await waitUntil(
      async () => (await handlerLog(log)).some((l) => l.what === 'GiveStart' && l.key.endsWith(':c:undo')),
      10_000,
    );
    await api.proc.kill('SIGKILL');
    const running = (await call(port, `/api/status/${id}`, { headers: CLIENT })).body as { status: string };
    assert.equal(running.status, 'RUNNING');
    // the new orchestrator starts while the cut-off caller still waits for its answer
    const [cut] = await Promise.all([pending, cluster.runner('api', undefined, env)]);
    assert.ok([503, 504].includes(cut.status), `the caller gets 503/504 (got ${cut.status})`);
    const runId = cut.headers.get('x-request-id') ?? '';

    let status: { status: string; outcome?: string; error?: { code: string; compensation?: string } } = {
      status: 'RUNNING',
    };
    await waitUntil(
      async () => {
        status = (await call(port, `/api/status/${id}`, { headers: CLIENT })).body as typeof status;
        return status.status === 'DONE';
      },
      20_000,
      200,
    );
    assert.equal(status.outcome, 'FAIL');
    assert.equal(status.error?.code, 'UNHANDLED_STEP_FAILURE');
    assert.equal(status.error?.compensation, 'COMPLETED');

    const lines = await handlerLog(log);
    const ran = (what: string, suffix: string) => lines.filter((l) => l.what === what && l.key.endsWith(suffix)).length;
    for (const s of ['a', 'b', 'c']) assert.equal(ran('Take', `:${s}`), 1, `step ${s} ran once`);
    assert.equal(ran('Refuse', ':pay'), 1, 'the failed step is not run again');
    assert.ok(ran('GiveStart', ':c:undo') >= 1, "c's undo was cut off and ran again (or its reply was taken)");
    assert.equal(ran('GiveStart', ':b:undo'), 1);
    assert.equal(ran('GiveStart', ':a:undo'), 1);
    // The order: c's undo (first try) before b's and a's.
    const order = lines.filter((l) => l.what === 'GiveStart').map((l) => l.key.split(':').slice(-2)[0]);
    assert.deepEqual([...new Set(order)], ['c', 'b', 'a']);
    // Each undo's effect once, under the run's id (the X-Request-Id the caller got).
    const keys = await ledgerKeys(prefix);
    assert.deepEqual(
      keys.filter((k) => k.endsWith(':undo')),
      [`${runId}:a:undo`, `${runId}:b:undo`, `${runId}:c:undo`],
    );
    assert.equal(keys.length, 6, 'three steps, three undos');
    console.log(`# counts: c's undo started ${ran('GiveStart', ':c:undo')}x, ledger rows ${keys.length}`);
  });
});
