import assert from 'node:assert/strict';
import { test } from 'node:test';
import { silentLogger } from '../../src/core/logger.js';
import type { SagaResult } from '../../src/core/types.js';
import type { AnyRunStatus } from '../../src/core/messages.js';
import { createGateway } from '../../src/gateway/server.js';
import { ScriptedService } from './harness.js';
import { post, settings } from './idempotency-harness.js';

/** Probes of a keyed retry answered from its run's status (h3/idem). */

const LOST_ANSWER: SagaResult = {
  outcome: 'FAIL',
  http: 503,
  error: { code: 'RUNNER_UNAVAILABLE', message: 'the connection to runner "main" was lost' },
  ran: 'unknown',
};
const at = new Date(0).toISOString();

test('a run kept without its body: every later replay says so too (Idempotent-Body-Omitted), not only the first', async () => {
  const runs = new Map<string, AnyRunStatus>();
  const status = { lookup: async (_scope: string, id: string) => runs.get(id) };
  const service = new ScriptedService(() => LOST_ANSWER);
  const gw = await createGateway({ settings: settings(), service, log: silentLogger(), status });
  try {
    const first = await post(gw, 'omit', { sku: 'A' });
    assert.equal(first.statusCode, 503);
    const runId = String(first.headers['x-request-id']);
    runs.set(runId, {
      requestId: runId,
      status: 'DONE',
      outcome: 'SUCCESS',
      http: 201,
      responseOmitted: 9_000_000,
      startedAt: at,
      updatedAt: at,
    } as AnyRunStatus);
    const retry = await post(gw, 'omit', { sku: 'A' });
    assert.equal(retry.statusCode, 201);
    assert.equal(retry.headers['idempotent-body-omitted'], 'true');
    const again = await post(gw, 'omit', { sku: 'A' });
    assert.equal(again.statusCode, 201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.headers['idempotent-body-omitted'], 'true', 'the stored replay says the body is omitted');
    assert.equal(again.headers['content-type'], undefined);
    assert.equal(service.calls.length, 1);
  } finally {
    await gw.close();
  }
});

test('a retry whose run is parked (WAITING) gets the 202 the first request got, with its Location, not 409', async () => {
  const runs = new Map<string, AnyRunStatus>();
  const status = { lookup: async (_scope: string, id: string) => runs.get(id) };
  const service = new ScriptedService(() => LOST_ANSWER);
  const base = settings();
  const s = { ...base, gateway: { ...base.gateway, limits: { ...base.gateway.limits, timeoutMs: 300 } } };
  const gw = await createGateway({ settings: s, service, log: silentLogger(), status });
  try {
    const first = await post(gw, 'parked', { sku: 'A' });
    assert.equal(first.statusCode, 503);
    const runId = String(first.headers['x-request-id']);
    const waitingOn = { step: 'approval', kind: 'signal', until: at };
    runs.set(runId, { requestId: runId, status: 'WAITING', waitingOn, startedAt: at, updatedAt: at } as AnyRunStatus);
    const retry = await post(gw, 'parked', { sku: 'A' });
    assert.equal(retry.statusCode, 202, `got ${retry.statusCode} ${retry.body}`);
    assert.equal(retry.headers['location'], `/api/status/${runId}`);
    assert.equal(service.calls.length, 1);
  } finally {
    await gw.close();
  }
});

// Not fixed (h3/idem, proposed): the status of a SUSPENDED run does not hold the step and error its
// 202 named, so a retry cannot be answered as its first request was.
test(
  'a retry whose run is SUSPENDED gets a 202 with its Location, not 409 at every retry',
  { todo: 'RunStatus of a SUSPENDED run lacks the step and error of its 202 body' },
  async () => {
    const runs = new Map<string, AnyRunStatus>();
    const status = { lookup: async (_scope: string, id: string) => runs.get(id) };
    const base = settings();
    const s = { ...base, gateway: { ...base.gateway, limits: { ...base.gateway.limits, timeoutMs: 300 } } };
    const gw = await createGateway({
      settings: s,
      service: new ScriptedService(() => LOST_ANSWER),
      log: silentLogger(),
      status,
    });
    try {
      const first = await post(gw, 'suspended', { sku: 'A' });
      const runId = String(first.headers['x-request-id']);
      runs.set(runId, { requestId: runId, status: 'SUSPENDED', startedAt: at, updatedAt: at } as AnyRunStatus);
      const retry = await post(gw, 'suspended', { sku: 'A' });
      assert.equal(retry.statusCode, 202, `got ${retry.statusCode}`);
      assert.equal(retry.headers['location'], `/api/status/${runId}`);
    } finally {
      await gw.close();
    }
  },
);

// Not fixed (h3/idem, proposed): a status source that never sees the run (sagaway start without a
// journal nor a nats system still hands the gateway one: firstStatus of no journals). A retry made
// while the first request runs polls only the status, never the key store: the first answer,
// stored meanwhile, is not replayed; the retry is held a whole timeout, then 409 (docs/gateway.md:
// "without a status source ... the lock alone decides", which would be an immediate 409).
test(
  'a retry while the first request runs, status blind: replayed once the first answer is stored, not held a timeout then 409',
  { todo: 'answerFromRun never reads the key store again' },
  async () => {
    const status = { lookup: async () => undefined };
    const service = new ScriptedService(async () => {
      await new Promise((r) => setTimeout(r, 100));
      return { outcome: 'SUCCESS', http: 201, response: { order: 'o1' } } as SagaResult;
    });
    const base = settings();
    const s = { ...base, gateway: { ...base.gateway, limits: { ...base.gateway.limits, timeoutMs: 1500 } } };
    const gw = await createGateway({ settings: s, service, log: silentLogger(), status });
    try {
      const first = post(gw, 'blind', { sku: 'A' });
      await new Promise((r) => setTimeout(r, 20));
      const started = Date.now();
      const retry = await post(gw, 'blind', { sku: 'A' });
      assert.equal((await first).statusCode, 201);
      assert.equal(retry.statusCode, 201, `got ${retry.statusCode} after ${Date.now() - started} ms`);
      assert.equal(service.calls.length, 1);
    } finally {
      await gw.close();
    }
  },
);
