import assert from 'node:assert/strict';
import { test } from 'node:test';
import { silentLogger } from '../../src/core/logger.js';
import type { SagaResult } from '../../src/core/types.js';
import type { AnyRunStatus } from '../../src/core/messages.js';
import { createGateway, type Gateway } from '../../src/gateway/server.js';
import { ScriptedService } from './harness.js';
import { post, settings } from './idempotency-harness.js';

/**
 * Issue 26 items 2 and 3, the gateway's logic alone: a key whose first answer was not the run's
 * outcome stays bound to the run, and a retry is answered from the run's status (a stand-in for
 * the journals and outcome buckets; the real ones run in test/distributed/keys-faults.int.test.ts).
 */

/** The first run's answer was lost (the broker dropped): the run may go on. */
const LOST_ANSWER: SagaResult = {
  outcome: 'FAIL',
  http: 503,
  error: { code: 'RUNNER_UNAVAILABLE', message: 'the connection to runner "main" was lost' },
  ran: 'unknown',
};

/** Statuses by run id; `lookup` counts its calls and may be told to fail. */
class Statuses {
  readonly runs = new Map<string, AnyRunStatus>();
  lookups = 0;
  down = false;
  /** called on each lookup (before it answers) */
  onLookup: (id: string) => void = () => undefined;
  async lookup(_scope: string, id: string): Promise<AnyRunStatus | undefined> {
    this.lookups++;
    this.onLookup(id);
    if (this.down) throw Object.assign(new Error('journal down'), { code: 'STATE_UNAVAILABLE' });
    return this.runs.get(id);
  }
}

const at = new Date(0).toISOString();

async function withGateway(
  service: ScriptedService,
  status: Statuses,
  fn: (gw: Gateway) => Promise<void>,
): Promise<void> {
  const gw = await createGateway({ settings: settings(), service, log: silentLogger(), status });
  try {
    await fn(gw);
  } finally {
    await gw.close();
  }
}

test('a lost answer keeps the key bound: the retry waits for the run, then replays its outcome (stored for the next)', async () => {
  const service = new ScriptedService(() => LOST_ANSWER);
  const status = new Statuses();
  await withGateway(service, status, async (gw) => {
    const first = await post(gw, 'k', { sku: 'A' });
    assert.equal(first.statusCode, 503);
    const runId = String(first.headers['x-request-id']);
    status.runs.set(runId, { requestId: runId, status: 'RUNNING', startedAt: at, updatedAt: at });
    // the run ends while the retry waits for it
    status.onLookup = () => {
      if (status.lookups < 2) return;
      status.runs.set(runId, {
        requestId: runId,
        status: 'DONE',
        outcome: 'SUCCESS',
        http: 201,
        response: { order: 'o1' },
        startedAt: at,
        updatedAt: at,
      });
    };
    const retry = await post(gw, 'k', { sku: 'A' });
    assert.equal(retry.statusCode, 201);
    assert.equal(retry.headers['idempotent-replayed'], 'true');
    assert.deepEqual(JSON.parse(retry.body), { order: 'o1' });
    assert.ok(status.lookups >= 2, 'it waited for the run');
    const lookups = status.lookups;
    const again = await post(gw, 'k', { sku: 'A' });
    assert.equal(again.statusCode, 201);
    assert.equal(again.body, retry.body);
    assert.equal(status.lookups, lookups, 'the replay was stored: no lookup for the next retry');
    assert.equal(service.calls.length, 1, 'the saga ran once');
  });
});

test('a run LOST with its runner is answered 504, as its caller was; a status that cannot be read is 503, nothing runs', async () => {
  const service = new ScriptedService(() => LOST_ANSWER);
  const status = new Statuses();
  await withGateway(service, status, async (gw) => {
    const lost = await post(gw, 'lost', { sku: 'A' });
    const id = String(lost.headers['x-request-id']);
    status.runs.set(id, { requestId: id, status: 'LOST', startedAt: at, updatedAt: at });
    const retry = await post(gw, 'lost', { sku: 'A' });
    assert.equal(retry.statusCode, 504);
    assert.equal(JSON.parse(retry.body).code, 'SAGA_TIMEOUT');
    assert.equal(retry.headers['idempotent-replayed'], 'true');

    await post(gw, 'down', { sku: 'B' });
    status.down = true;
    const unreadable = await post(gw, 'down', { sku: 'B' });
    assert.equal(unreadable.statusCode, 503);
    assert.equal(JSON.parse(unreadable.body).code, 'STATE_UNAVAILABLE');
    // another body with a bound key is still a mismatch, before any lookup
    assert.equal((await post(gw, 'down', { sku: 'C' })).statusCode, 422);
    assert.equal(service.calls.length, 2, 'no retry ran the saga');
  });
});

test('a failure where nothing ran releases the key: the retry runs', async () => {
  let n = 0;
  const service = new ScriptedService(() =>
    ++n === 1
      ? {
          outcome: 'FAIL',
          http: 503,
          error: { code: 'RUNNER_UNAVAILABLE', message: 'no live runner consumes stream "work"', step: 'charge' },
          ran: 'none',
        }
      : { outcome: 'SUCCESS', http: 201, response: { order: 'o2' } },
  );
  await withGateway(service, new Statuses(), async (gw) => {
    assert.equal((await post(gw, 'k', { sku: 'A' })).statusCode, 503);
    const retry = await post(gw, 'k', { sku: 'A' });
    assert.equal(retry.statusCode, 201);
    assert.equal(retry.headers['idempotent-replayed'], undefined);
    assert.equal(service.calls.length, 2);
  });
});
