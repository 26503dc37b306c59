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
 * Issue 26 item 4, on the real NATS and PostgreSQL: no side effect before a record to resume or
 * undo it. The orchestrating replica is killed (-9) right after it dispatched the first step of
 * a short run (well inside the first 500 ms, where the start record used to be deferred); the
 * other replica finds the run in the journal and finishes it, so the order is not left with a
 * `reserve` and no `charge`. The caller of the dead replica gets its 504 within the saga's
 * timeout, not the timeout plus the gateway's grace.
 */

const NATS = 'nats://127.0.0.1:4222';
const PG = process.env['SAGAWAY_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const natsUp = await reachable(4222);
const pgReason = await pgUnavailableReason(PG);
const skip = !natsUp ? skipOrFail(`NATS not reachable at ${NATS}`) : pgReason ? skipOrFail(pgReason) : false;

/** Fast advertisements and journal scans, so a dead process is noticed within about a second (systems.bus.advertiseInterval, runners.api.resumeInterval). */
const FAST_ADVERTISE = '300ms';
const FAST_RESUME = '500ms';
/** The saga's timeout: the caller of a dead replica must have its answer within it. */
const TIMEOUT_S = 6;
/** How long past the deadline the gateway waits for a live runner's answer. */
const GRACE_S = 5;

/** Each action notes its start in $SAGAWAY_TEST_LOG; effects are ledger rows keyed by the idempotency key. */
const SHOP_HANDLER = `
import { appendFileSync } from 'node:fs';
const note = (what, ctx) => appendFileSync(process.env.SAGAWAY_TEST_LOG, JSON.stringify({ what, tag: '', pid: process.pid, key: ctx.idempotencyKey }) + '\\n');
const sleep = (ms, signal) => new Promise((r) => { const t = setTimeout(r, ms); signal.addEventListener('abort', () => { clearTimeout(t); r(); }); });
const effect = (ctx, data) => ctx.state('ledger').create(ctx.idempotencyKey, data, { idempotencyKey: ctx.idempotencyKey });
export default {
  name: 'shop',
  actions: {
    Reserve: { 0: async (input, ctx) => { note('Reserve', ctx); await effect(ctx, { reserved: true }); await sleep(300, ctx.signal); return { reserved: true }; } },
    Charge: { 0: async (input, ctx) => { note('Charge', ctx); await effect(ctx, { charged: true }); return { charged: true }; } },
    Release: { 0: async (input, ctx) => { note('Release', ctx); await effect(ctx, { released: true }); return { released: true }; } },
  },
};
`;

function configFor(prefix: string) {
  const meta = (action: string) => ({ handler: 'shop', action, version: 0, stream: 'shop', outputElement: '-' });
  return {
    gateway: {
      auth: CLIENT_AUTH,
      apis: [{ path: '/', runner: 'api', public: true }],
      limits: { timeout: `${TIMEOUT_S}s`, rate: false },
    },
    // a long grace, so that "within the timeout" and "after the grace" are seconds apart
    systems: {
      bus: {
        type: 'nats',
        servers: [NATS],
        ackWait: '1s',
        maxDeliver: 5,
        prefix,
        advertiseInterval: FAST_ADVERTISE,
        runGrace: `${GRACE_S}s`,
      },
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
            steps: [
              { id: 'start', type: 'start', links: [{ to: 'reserve' }] },
              {
                id: 'reserve',
                type: 'event',
                eventMeta: meta('Reserve'),
                compensate: { eventMeta: meta('Release') },
                links: [{ to: 'charge', when: ['SUCCESS'] }],
              },
              { id: 'charge', type: 'event', eventMeta: meta('Charge'), links: [{ to: 'ok', when: ['SUCCESS'] }] },
              { id: 'ok', type: 'success', http: 201 },
            ],
          },
        ],
      },
      worker: { handlers: ['./shop.mjs'], streams: { shop: { handler: 'shop' } } },
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

describe('the start record before the first step', { skip }, () => {
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  });

  test('a replica killed right after dispatching the first step: another replica finishes the run', async () => {
    const prefix = uniquePrefix('sr');
    const { stringify } = await import('yaml');
    const cluster = await Cluster.create({ 'sagaway.yaml': stringify(configFor(prefix)), 'shop.mjs': SHOP_HANDLER });
    const log = join(cluster.dir, 'handler.log');
    cleanups.push(
      () => cluster.close(),
      () => dropStreams(NATS, prefix),
      () => dropTables(prefix),
    );
    const env = { SAGAWAY_TEST_LOG: log };
    // one orchestrator at first, so that it is the one that takes the request
    const [doomed, , { port }] = await Promise.all([
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
    // the first step was dispatched (the worker runs it): kill its orchestrator at once
    await waitUntil(async () => (await handlerLog(log)).some((l) => l.what === 'Reserve'), 10_000, 10);
    await doomed.proc.kill('SIGKILL');
    const survivor = await cluster.runner('api', undefined, env);

    const cut = await pending;
    assert.equal(cut.status, 504, `the caller of the dead replica gets 504 (got ${cut.status})`);
    // at the deadline (give or take the load of a shared machine), not after the grace
    assert.ok(cut.ms < (TIMEOUT_S + GRACE_S / 2) * 1000, `the 504 comes at the saga's deadline (${cut.ms} ms)`);
    const runId = cut.headers.get('x-request-id') ?? '';

    let status: { status?: string; outcome?: string; http?: number } = {};
    await waitUntil(
      async () => {
        const r = await call(port, `/api/status/${id}`, { headers: CLIENT });
        status = r.body as typeof status;
        return r.status === 200 && status.status === 'DONE';
      },
      20_000,
      200,
    ).catch(() => assert.fail(`the run was never finished by the other replica: ${JSON.stringify(status)}`));
    assert.equal(status.outcome, 'SUCCESS');
    assert.equal(status.http, 201);
    assert.ok(
      survivor.proc.lines.some((l) => l['msg'] === 'resuming journaled saga' && l['runId'] === runId),
      'the surviving replica resumed it',
    );
    // reserve once (a resume re-runs it under the same key: applied once), and charge
    const keys = await ledgerKeys(prefix);
    assert.deepEqual(keys, [`${runId}:charge`, `${runId}:reserve`]);
  });
});
