import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { call, Cluster, skipOrFail, waitUntil, type Proc } from './harness.js';
import { NATS_SERVER, ownNatsAvailable, startOwnNats, type OwnNats } from './own-nats.js';

/**
 * examples/distributed as its README walks through it: 5 processes on a nats-server started
 * with the example's nats-server.conf (each process with its role's credentials), no journal
 * (outcomes at /api/status come from the NATS key-value bucket).
 */

const prefix = 'ex';

describe(
  'examples/distributed walk-through',
  { skip: ownNatsAvailable() ? false : skipOrFail(`${NATS_SERVER} is not installed`) },
  () => {
    let nats: OwnNats;
    let cluster: Cluster;
    let port: number;
    let pricing2: Proc;

    before(async () => {
      nats = await startOwnNats();
      const dir = join('examples', 'distributed');
      cluster = await Cluster.create({
        'sagaway.yaml': await readFile(join(dir, 'sagaway.yaml'), 'utf8'),
        'handlers/pricing.mjs': await readFile(join(dir, 'handlers', 'pricing.mjs'), 'utf8'),
      });
      const env = nats.env('runner');
      const started = await Promise.all([
        cluster.runner('shop', undefined, env),
        cluster.runner('shop', undefined, env),
        cluster.runner('pricing', undefined, env),
        cluster.runner('pricing', '2', env),
      ]);
      pricing2 = started[3].proc;
      ({ port } = await cluster.gateway(nats.env('gateway')));
      await waitUntil(async () => (await call(port, '/api/request/quote/A1?qty=12')).status === 200, 10_000, 100);
    });

    after(async () => {
      await cluster?.close();
      await nats?.stop();
    });

    test('the calls of the README answer as shown', async () => {
      const q = await call(port, '/api/request/quote/A1?qty=12');
      assert.deepEqual({ ...(q.body as object), pid: 0 }, { sku: 'A1', qty: 12, total: 135, currency: 'EUR', pid: 0 });
      assert.equal((q.body as { pid: number }).pid, pricing2.pid, 'deployment 2 ran it');
      const v1 = await call(port, '/api/request/quote-v1/B2');
      assert.deepEqual({ ...(v1.body as object), pid: 0 }, { sku: 'B2', price: 40, currency: 'EUR', pid: 0 });
      assert.notEqual((v1.body as { pid: number }).pid, pricing2.pid, 'deployment 1 ran it');
      const zz = await call(port, '/api/request/quote/ZZ');
      assert.equal(zz.status, 404);
      assert.equal((zz.body as { code: string }).code, 'UNKNOWN_SKU');
      // The client's X-Request-Id is a correlation id; the run id is the gateway's (X-Request-Id of the response).
      const q3 = await call(port, '/api/request/quote/C3?qty=2', { headers: { 'x-request-id': `${prefix}-demo` } });
      const runId = q3.headers.get('x-request-id');
      assert.match(runId ?? '', /^[0-9a-f-]{36}$/);
      assert.equal(q3.headers.get('x-correlation-id'), `${prefix}-demo`);
      const byRunId = await call(port, `/api/status/${runId}`);
      assert.equal(byRunId.status, 200);
      // an anonymous caller finds its run by the run id only: its own X-Request-Id is guessable by
      // clients behind the same address (docs/gateway.md); an authenticated caller may use either
      assert.equal((await call(port, `/api/status/${prefix}-demo`)).status, 404);
      const s = byRunId;
      assert.deepEqual(
        {
          ...(s.body as Record<string, unknown>),
          startedAt: 0,
          updatedAt: 0,
          response: { ...(s.body as { response: object }).response, pid: 0 },
        },
        {
          requestId: runId,
          correlationId: `${prefix}-demo`,
          status: 'DONE',
          outcome: 'SUCCESS',
          http: 200,
          response: { sku: 'C3', qty: 2, total: 199.8, currency: 'EUR', pid: 0 },
          startedAt: 0,
          updatedAt: 0,
        },
      );
    });

    test('the stream form works through the distributed gateway too', async () => {
      const res = await fetch(`http://127.0.0.1:${port}/api/stream/quote/A1`);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
      assert.match(await res.text(), /event: end/);
    });

    test('each role had every permission it used: the server logged no violation', () => {
      const refused = new Set(nats.log().match(/\w+ Violation - User "\w+", Subject "[^"]+"/g) ?? []);
      assert.deepEqual([...refused], []);
    });

    test('deployment 2 stopped: its step fails fast with 503, deployment 1 still answers', async () => {
      await pricing2.kill('SIGTERM');
      const r = await call(port, '/api/request/quote/A1');
      assert.equal(r.status, 503);
      assert.equal((r.body as { code: string }).code, 'RUNNER_UNAVAILABLE');
      // fails fast: well before the example's request timeout (limits.timeout: 10s) would answer
      assert.ok(r.ms < 10_000 / 4, `answered in ${r.ms} ms`);
      assert.equal((await call(port, '/api/request/quote-v1/B2')).status, 200);
    });
  },
);
