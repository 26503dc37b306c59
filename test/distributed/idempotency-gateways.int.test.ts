import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
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
  WORK_HANDLER,
  type Proc,
} from './harness.js';

/**
 * Idempotency-Key across two `sagaway gateway` processes sharing a PostgreSQL key store: the
 * same new key sent to both at once runs once (one runs it, the other waits for that run and
 * replays its answer), and a kill -9 of the gateway holding a key does not run it again: the
 * retry on the other gateway is answered from the first run's outcome, read from the outcome
 * bucket, long before the lock's bound (docs/gateway.md, Idempotency keys).
 */

const NATS = 'nats://127.0.0.1:4222';
const PG = process.env['SAGAWAY_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const natsUp = await reachable(4222);
const pgReason = await pgUnavailableReason(PG);
const skip = !natsUp ? skipOrFail(`NATS not reachable at ${NATS}`) : pgReason ? skipOrFail(pgReason) : false;

/** The key lock lasts `limits.timeout` + 10 s: 2 s here keeps the kill test near 12 s. */
const TIMEOUT = '2s';

function configFor(prefix: string) {
  return {
    gateway: {
      auth: CLIENT_AUTH,
      apis: [{ path: '/', runner: 'api' }],
      limits: { timeout: TIMEOUT, rate: false },
      idempotency: { state: 'keys' },
    },
    systems: { bus: { type: 'nats', servers: [NATS], prefix } },
    defaultSystem: 'bus',
    states: {
      keys: { type: 'postgres', url: PG, table: `${prefix}_k` },
      ledger: { type: 'memory' },
    },
    runners: {
      api: {
        handlers: ['./work.mjs'],
        sagas: [
          {
            id: 'slow',
            path: '/slow',
            methods: ['POST'],
            steps: [
              { id: 'start', type: 'start', links: [{ to: 's' }] },
              {
                id: 's',
                type: 'event',
                eventMeta: {
                  handler: 'work',
                  action: 'Slow',
                  version: 0,
                  outputElement: '$.s',
                  parameters: { ms: 700 },
                },
                links: [{ to: 'ok' }],
              },
              { id: 'ok', type: 'success', outputElement: 's' },
            ],
          },
        ],
      },
    },
  };
}

async function dropTable(prefix: string): Promise<void> {
  const c = new pg.Client({ connectionString: PG });
  await c.connect();
  try {
    await c.query(`drop table if exists "${prefix}_k_reqkeys"`);
  } finally {
    await c.end();
  }
}

const post = (port: number, key: string) =>
  call(port, '/api/request/slow', {
    method: 'POST',
    headers: { ...CLIENT, 'idempotency-key': key },
    body: { sku: 'A1' },
  });

describe('Idempotency-Key across two gateway processes on PostgreSQL', { skip }, () => {
  const prefix = uniquePrefix('ik');
  let cluster: Cluster;
  let log: string;

  /** Two gateway processes of this test, each reaching the runner. */
  async function twoGateways(): Promise<[{ proc: Proc; port: number }, { proc: Proc; port: number }]> {
    const both = await Promise.all([cluster.gateway(), cluster.gateway()]);
    for (const g of both) {
      await waitUntil(
        async () =>
          (await call(g.port, '/api/request/slow', { method: 'POST', headers: CLIENT, body: {} })).status === 200,
        15_000,
        100,
      );
    }
    return both;
  }

  before(async () => {
    const { stringify } = await import('yaml');
    cluster = await Cluster.create({ 'sagaway.yaml': stringify(configFor(prefix)), 'work.mjs': WORK_HANDLER });
    log = `${cluster.dir}/handler.log`;
    await cluster.runner('api', undefined, { SAGAWAY_TEST_LOG: log, SAGAWAY_TEST_TAG: 'r' });
  });

  after(async () => {
    await cluster?.close();
    await dropStreams(NATS, prefix);
    if (!pgReason) await dropTable(prefix);
  });

  test('the same new key sent to both at once: one runs it, the other waits for it and replays it', async () => {
    const [a, b] = await twoGateways();
    const before = (await handlerLog(log)).filter((l) => l.what === 'SlowStart').length;

    const [r1, r2] = await Promise.all([post(a.port, 'same-key'), post(b.port, 'same-key')]);
    assert.deepEqual([r1.status, r2.status], [200, 200], `${JSON.stringify(r1.body)} ${JSON.stringify(r2.body)}`);
    const replayed = [r1, r2].filter((r) => r.headers.get('idempotent-replayed') === 'true');
    assert.equal(replayed.length, 1, 'one ran it, the other was answered from that run');
    assert.deepEqual(r1.body, r2.body);
    const starts = (await handlerLog(log)).filter((l) => l.what === 'SlowStart');
    assert.equal(starts.length - before, 1, 'the saga ran once for the key');
    for (const g of [a, b]) {
      const replay = await post(g.port, 'same-key');
      assert.equal(replay.status, 200);
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(replay.body, r1.body);
    }
    assert.equal(
      (await handlerLog(log)).filter((l) => l.what === 'SlowStart').length - before,
      1,
      'replays run nothing',
    );
  });

  test('kill -9 of the gateway holding a key: the other answers from the first run, without running it again', async () => {
    const [a, b] = await twoGateways();
    const starts = async () => (await handlerLog(log)).filter((l) => l.what === 'SlowStart').length;
    const before = await starts();
    const pending = post(a.port, 'held-key').catch(() => undefined);
    await waitUntil(async () => (await starts()) === before + 1, 10_000, 20);
    const claimedAt = Date.now();
    await a.proc.kill('SIGKILL');
    await pending;
    // the run goes on in the runner; the retry waits for it (or reads its outcome) and replays it
    const retry = await post(b.port, 'held-key');
    const waited = Date.now() - claimedAt;
    assert.equal(retry.status, 200, JSON.stringify(retry.body));
    assert.equal(retry.headers.get('idempotent-replayed'), 'true');
    assert.equal(await starts(), before + 1, 'not run again');
    assert.ok(waited < 2_000 + 10_000, `answered before the lock's bound (${waited} ms)`);
    const replay = await post(b.port, 'held-key');
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(replay.body, retry.body);
  });
});
