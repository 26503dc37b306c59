import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { stringify } from 'yaml';
import { NATS, natsUnavailableReason, skipOrFail } from '../../../test/nats-available.js';
import { loadConfig } from '../../config/load.js';
import { silentLogger } from '../../core/logger.js';
import { createGateway, type Gateway } from '../../gateway/server.js';
import { BUILTIN_HANDLERS } from '../../handlers/index.js';
import { Host } from '../../runner/host.js';
import { createState } from '../../states/index.js';
import { createCluster } from '../../systems/index.js';
import { PROBE_HANDLER } from '../../testing/probe-handler.js';
import { bucketName, outcomeKey } from './outcome-value.js';
import { OutcomeReader } from './outcome-reader.js';
import { OutcomeRecorder } from './outcomes.js';
import type { NatsHub } from './hub.js';

/**
 * Outcomes without a journal (issue 13 part 1) on the real NATS: a runner with a nats system and
 * no journal keeps each run's outcome in its bucket, and /api/status reads it, scoped to the
 * caller, RUNNING while in flight, capped in size, without secrets.
 */

const natsDown = await natsUnavailableReason();
const prefix = `o${randomBytes(5).toString('hex')}`;
const SECRET = `tok-${randomBytes(6).toString('hex')}`;
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

const step = (id: string, eventMeta: Record<string, unknown>) => ({
  id,
  path: `/${id}`,
  steps: [
    { id: 'start', type: 'start', links: [{ to: 'e' }] },
    {
      id: 'e',
      type: 'event',
      autoFail: true,
      eventMeta: { handler: 'probe', version: 0, outputElement: '$.out', ...eventMeta },
      links: [{ to: 'ok' }],
    },
    { id: 'ok', type: 'success' },
  ],
});

const config = {
  gateway: {
    auth: {
      apiKeys: [
        { name: 'alice', sha256: sha('a') },
        { name: 'bob', sha256: sha('b') },
      ],
    },
    apis: [{ path: '/', runner: 'svc' }],
  },
  systems: { bus: { type: 'nats', servers: [NATS], prefix } },
  defaultSystem: 'bus',
  secrets: { from: 'env', prefix: `${prefix.toUpperCase()}_` },
  runners: {
    svc: {
      handlers: ['./probe.mjs'],
      statusTtl: '1m',
      statusMaxSize: '2kb',
      sagas: [
        step('echo', { action: 'Echo', inputElement: 'parameters' }),
        step('slow', { action: 'Slow', parameters: { ms: 700 } }),
        step('fail', { action: 'Fail', parameters: { code: 'NO_STOCK', message: 'none left', http: 409 } }),
        step('leak', { action: 'Leak', inject: true, parameters: { header: '#{{TOKEN}}' } }),
      ],
    },
  },
};

describe('outcomes without a journal (NATS KV)', { skip: natsDown ? skipOrFail(natsDown) : false }, () => {
  let dir: string;
  let host: Host;
  let gw: Gateway;

  before(async () => {
    process.env[`${prefix.toUpperCase()}_TOKEN`] = SECRET;
    dir = await mkdtemp(join(tmpdir(), 'sagaway-outcomes-'));
    await writeFile(join(dir, 'probe.mjs'), PROBE_HANDLER);
    await writeFile(join(dir, 'sagaway.yaml'), stringify(config));
    const { settings } = await loadConfig(join(dir, 'sagaway.yaml'));
    host = await Host.start({ settings, log: silentLogger(), builtins: BUILTIN_HANDLERS, createState, createCluster });
    assert.ok(await host.systemsConnected(10_000));
    gw = await createGateway({ settings, service: host, log: silentLogger(), status: host.statusReader() });
    // the bucket is opened once connected: until then runs are not recorded (a warm-up run)
    for (let i = 0; i < 200; i++) {
      const r = await gw.app.inject({ method: 'GET', url: '/api/request/echo?warm=1', headers: { 'x-api-key': 'a' } });
      await new Promise((res) => setTimeout(res, 25));
      const s = await gw.app.inject({
        method: 'GET',
        url: `/api/status/${r.headers['x-request-id']}`,
        headers: { 'x-api-key': 'a' },
      });
      if (s.statusCode === 200) break;
    }
  });

  after(async () => {
    await gw?.close();
    const jsm = (host?.cluster as NatsHub | undefined)?.gatewaySystem()?.jetstream().manager;
    for (const s of [`KV_${prefix}_status_svc`, `${prefix}_events`, `${prefix}_resp`])
      await jsm?.streams.delete(s).catch(() => undefined);
    await host?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const call = (url: string, key?: string, headers: Record<string, string> = {}) =>
    gw.app.inject({ method: 'GET', url, headers: { ...(key ? { 'x-api-key': key } : {}), ...headers } });

  /** The status once the bucket has the DONE value (the write is not awaited by the run). */
  async function doneStatus(id: string, key: string): Promise<Record<string, unknown>> {
    for (let i = 0; i < 100; i++) {
      const r = await call(`/api/status/${id}`, key);
      if (r.statusCode === 200 && r.json().status === 'DONE') return r.json() as Record<string, unknown>;
      await new Promise((res) => setTimeout(res, 20));
    }
    throw new Error(`no DONE status for ${id}`);
  }

  test('the caller reads a success by run id and by its own X-Request-Id; others get 404', async () => {
    const r = await call('/api/request/echo?x=1', 'a', { 'x-request-id': `${prefix}-mine` });
    assert.equal(r.statusCode, 200);
    const runId = r.headers['x-request-id'] as string;
    const s = await doneStatus(runId, 'a');
    assert.deepEqual(
      { ...s, startedAt: 0, updatedAt: 0 },
      {
        requestId: runId,
        correlationId: `${prefix}-mine`,
        status: 'DONE',
        outcome: 'SUCCESS',
        http: 200,
        response: { out: { x: '1' } },
        startedAt: 0,
        updatedAt: 0,
      },
    );
    assert.ok(Date.parse(s['updatedAt'] as string) >= Date.parse(s['startedAt'] as string));
    assert.deepEqual((await call(`/api/status/${prefix}-mine`, 'a')).json(), s);
    // a second run with the same correlation id is a run of its own; the id keeps naming the first
    const again = await call('/api/request/echo?x=2', 'a', { 'x-request-id': `${prefix}-mine` });
    const second = await doneStatus(again.headers['x-request-id'] as string, 'a');
    assert.deepEqual(second['response'], { out: { x: '2' } });
    assert.equal((await call(`/api/status/${prefix}-mine`, 'a')).json().requestId, runId);
    for (const [id, key] of [
      [runId, 'b'],
      [runId, undefined],
      [`${prefix}-mine`, 'b'],
      ['nope', 'a'],
    ] as const) {
      assert.equal((await call(`/api/status/${id}`, key)).statusCode, 404, `${id} as ${key}`);
    }
  });

  test('RUNNING while in flight, then the outcome', async () => {
    const pending = call('/api/request/slow', 'a', { 'x-request-id': `${prefix}-slow` });
    let running: Record<string, unknown> | undefined;
    for (let i = 0; i < 50 && !running; i++) {
      await new Promise((res) => setTimeout(res, 20));
      const s = await call(`/api/status/${prefix}-slow`, 'a');
      if (s.statusCode === 200) running = s.json() as Record<string, unknown>;
    }
    assert.equal(running?.['status'], 'RUNNING');
    assert.equal(running?.['outcome'], undefined);
    const r = await pending;
    assert.equal(r.statusCode, 200);
    const s = await doneStatus(`${prefix}-slow`, 'a');
    assert.equal(s['outcome'], 'SUCCESS');
    assert.deepEqual(s['response'], { out: { slow: true } });
  });

  test('a failure keeps its error; a secret never reaches the bucket', async () => {
    const r = await call('/api/request/fail', 'a');
    assert.equal(r.statusCode, 409);
    const s = await doneStatus(r.headers['x-request-id'] as string, 'a');
    assert.equal(s['outcome'], 'FAIL');
    assert.equal(s['http'], 409);
    assert.deepEqual(
      { code: (s['error'] as { code: string }).code, message: (s['error'] as { message: string }).message },
      { code: 'NO_STOCK', message: 'none left' },
    );

    const leak = await call('/api/request/leak', 'a');
    assert.equal(leak.statusCode, 502);
    const id = leak.headers['x-request-id'] as string;
    const ls = await doneStatus(id, 'a');
    assert.equal((ls['error'] as { code: string }).code, 'UPSTREAM_REFUSED');
    const { Kvm } = await import('@nats-io/kv');
    const system = (host.cluster as NatsHub).gatewaySystem()!;
    const kv = await new Kvm(system.jetstream().client).open(bucketName(system.names, 'svc'));
    const raw = await kv.get(outcomeKey('key:alice', id));
    const text = Buffer.from(raw!.value).toString('utf8');
    assert.match(text, /UPSTREAM_REFUSED/);
    assert.ok(!text.includes(SECRET), 'the secret is not in the stored value');
    assert.ok(!text.includes('"input"') && !text.includes('"user"'), 'no input nor principal stored');
  });

  test('a response over statusMaxSize is left out, with its size', async () => {
    const big = 'x'.repeat(3000);
    const r = await call(`/api/request/echo?big=${big}`, 'a');
    assert.equal(r.statusCode, 200);
    const s = await doneStatus(r.headers['x-request-id'] as string, 'a');
    assert.equal(s['outcome'], 'SUCCESS');
    assert.equal(s['response'], undefined);
    assert.equal(s['responseOmitted'], Buffer.byteLength(JSON.stringify({ out: { big } })));
  });

  test('the bucket has the TTL as max_age and keeps one value per key', async () => {
    const info = await (host.cluster as NatsHub)
      .gatewaySystem()!
      .jetstream()
      .manager.streams.info(`KV_${prefix}_status_svc`);
    assert.equal(info.config.max_age, 60_000 * 1_000_000);
    assert.equal(info.config.max_msgs_per_subject, 1);
    assert.equal(info.config.max_msg_size, 2048 + 1024);
  });

  test('a changed statusTtl or statusMaxSize updates the bucket; a runner without a bucket reads as nothing', async () => {
    const system = (host.cluster as NatsHub).gatewaySystem()!;
    const other = new OutcomeRecorder(
      system,
      { name: 'svc', deployment: '1', statusTtlMs: 120_000, statusMaxBytes: 4096 },
      'other-instance',
      silentLogger(),
    );
    for (let i = 0; i < 100 && !other.ready; i++) await new Promise((res) => setTimeout(res, 20));
    const info = await system.jetstream().manager.streams.info(`KV_${prefix}_status_svc`);
    assert.deepEqual([info.config.max_age, info.config.max_msg_size], [120_000 * 1_000_000, 4096 + 1024]);
    const reader = new OutcomeReader(system, ['never-ran'], () => true);
    assert.equal(await reader.lookup('key:alice', 'anything'), undefined);
  });

  test('a RUNNING run whose process is gone shows LOST', async () => {
    const system = (host.cluster as NatsHub).gatewaySystem()!;
    const ghost = new OutcomeRecorder(
      system,
      { name: 'svc', deployment: '1', statusTtlMs: 60_000, statusMaxBytes: 2048 },
      'gone-instance',
      silentLogger(),
    );
    for (let i = 0; i < 100 && !ghost.ready; i++) await new Promise((res) => setTimeout(res, 20));
    ghost.begin('key:alice', `${prefix}-ghost`, undefined);
    assert.equal(ghost.lost, 0);
    await new Promise((res) => setTimeout(res, 1100));
    const s = await call(`/api/status/${prefix}-ghost`, 'a');
    assert.equal(s.statusCode, 200);
    assert.equal(s.json().status, 'LOST');
  });
});
