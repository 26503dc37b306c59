import assert from 'node:assert/strict';
import { test } from 'node:test';
import { silentLogger } from '../../src/core/logger.js';
import type { SagaResult } from '../../src/core/types.js';
import { createGateway, type Gateway } from '../../src/gateway/server.js';
import { ScriptedService } from './harness.js';
import { post, settings } from './idempotency-harness.js';

/** An outside client's probes of Idempotency-Key requests (h3/idem). */

async function withGateway(service: ScriptedService, fn: (gw: Gateway) => Promise<void>): Promise<void> {
  const gw = await createGateway({ settings: settings(), service, log: silentLogger() });
  try {
    await fn(gw);
  } finally {
    await gw.close();
  }
}

test('a replayed 202 of a parked run keeps its Location (where the outcome will be)', () =>
  withGateway(
    new ScriptedService((req): SagaResult => ({
      outcome: 'WAITING',
      http: 202,
      response: { status: 'WAITING', runId: req.runId },
      runId: req.runId,
    })),
    async (gw) => {
      const first = await post(gw, 'park-1', { amount: 5 });
      assert.equal(first.statusCode, 202);
      const location = first.headers['location'];
      assert.equal(location, `/api/status/${first.headers['x-request-id']}`);
      const again = await post(gw, 'park-1', { amount: 5 });
      assert.equal(again.statusCode, 202);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.headers['location'], location);
    },
  ));
