import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
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
} from './harness.js';
import { OtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';

/**
 * Issue 22 item 4, on the real NATS and PostgreSQL: gateway, orchestrating runner and a worker
 * runner, each its own OS process, export their spans over OTLP/HTTP to a receiver in this test.
 * A request with a caller's `traceparent` is one trace across the three processes (request ->
 * saga run -> steps -> remote actions, the context carried in NATS headers); a run whose runner
 * is killed (-9) mid-run is resumed by another replica in a new trace linked to the first.
 */

const NATS = 'nats://127.0.0.1:4222';
const PG = process.env['SAGAWAY_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const natsUp = await reachable(4222);
const pgReason = await pgUnavailableReason(PG);
const skip = !natsUp ? skipOrFail(`NATS not reachable at ${NATS}`) : pgReason ? skipOrFail(pgReason) : false;

const SHOP_HANDLER = `
import { appendFileSync } from 'node:fs';
const note = (what, ctx) => appendFileSync(process.env.SAGAWAY_TEST_LOG, JSON.stringify({ what, tag: '', pid: process.pid, key: ctx.idempotencyKey }) + '\\n');
const sleep = (ms, signal) => new Promise((r) => { const t = setTimeout(r, ms); signal.addEventListener('abort', () => { clearTimeout(t); r(); }); });
export default {
  name: 'shop',
  actions: {
    Reserve: { 0: async (input, ctx) => { note('Reserve', ctx); await sleep(400, ctx.signal); return { reserved: true }; } },
    Charge: { 0: async (input, ctx) => { note('Charge', ctx); return { charged: true }; } },
  },
};
`;

function configFor(prefix: string) {
  const meta = (action: string) => ({ handler: 'shop', action, version: 0, stream: 'shop', outputElement: '-' });
  return {
    gateway: {
      auth: CLIENT_AUTH,
      apis: [{ path: '/', runner: 'api', public: true }],
      limits: { timeout: '5s', rate: false },
    },
    // neither `enabled` nor the endpoint: the OTEL_* variables of each process decide, and each
    // names itself with OTEL_SERVICE_NAME (a process without them does not trace)
    observability: { tracing: { headers: { 'x-otlp-key': 'k-123' } } },
    systems: {
      bus: {
        type: 'nats',
        servers: [NATS],
        ackWait: '1s',
        maxDeliver: 5,
        prefix,
        advertiseInterval: '300ms',
        runGrace: '3s',
      },
    },
    defaultSystem: 'bus',
    states: { jr: { type: 'postgres', url: PG, table: `${prefix}_journal` } },
    runners: {
      api: {
        journal: 'jr',
        resumeInterval: '500ms',
        sagas: [
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

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const one = (spans: ReceivedSpan[], pred: (s: ReceivedSpan) => boolean, what: string): ReceivedSpan => {
  const found = spans.filter(pred);
  assert.equal(found.length, 1, `${what}: one span (got ${found.map((s) => s.name).join(', ') || 'none'})`);
  return found[0]!;
};

describe('OpenTelemetry across gateway, runner and a remote step over NATS', { skip }, () => {
  const prefix = uniquePrefix('ot');
  let receiver: OtlpReceiver;
  let cluster: Cluster;
  let port: number;
  let api: Awaited<ReturnType<Cluster['runner']>>;
  let log: string;
  const env = (service: string) => ({
    OTEL_SERVICE_NAME: service,
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_BSP_SCHEDULE_DELAY: '100',
    SAGAWAY_TEST_LOG: log,
  });
  /** what crossed NATS: the headers of every saga request and event of this test's prefix */
  const seen: { subject: string; traceparent: string | undefined }[] = [];
  let nc: { close(): Promise<void> } | undefined;

  before(async () => {
    receiver = await OtlpReceiver.start();
    const { stringify } = await import('yaml');
    cluster = await Cluster.create({
      'sagaway.yaml': stringify(configFor(prefix)),
      'shop.mjs': SHOP_HANDLER,
    });
    log = join(cluster.dir, 'handler.log');
    const { connect } = await import('@nats-io/transport-node');
    const conn = await connect({ servers: NATS });
    nc = conn;
    for (const subject of [`${prefix}.run.>`, `${prefix}.ev.>`])
      conn.subscribe(subject, {
        callback: (_err, msg) => {
          seen.push({ subject: msg.subject, traceparent: msg.headers?.get('traceparent') || undefined });
        },
      });
    [api, , { port }] = await Promise.all([
      cluster.runner('api', undefined, env('orchestrator')),
      cluster.runner('worker', undefined, env('worker')),
      cluster.gateway(env('gateway')),
    ]);
  });
  after(async () => {
    await nc?.close();
    await cluster?.close();
    await receiver?.close();
    await dropStreams(NATS, prefix);
    const c = new pg.Client({ connectionString: PG });
    await c.connect();
    await c.query(`drop table if exists "${prefix}_journal", "${prefix}_journal_idem"`).catch(() => undefined);
    await c.end();
  });

  test("one trace, with the right parents, and the caller's traceparent honoured", async () => {
    const traceId = hex(16);
    const callerSpan = hex(8);
    const res = await call(port, '/api/request/order', {
      method: 'POST',
      body: { sku: 'X', password: 'hunter2' },
      headers: { ...CLIENT, traceparent: `00-${traceId}-${callerSpan}-01`, tracestate: 'vendor=abc' },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    // request, run, 4 steps (start, reserve, charge, ok) and 2 actions
    await waitUntil(() => receiver.trace(traceId).length >= 8, 15_000, 100).catch(() =>
      assert.fail(
        `spans of the trace: ${receiver
          .trace(traceId)
          .map((s) => `${s.service}:${s.name}`)
          .join(', ')}`,
      ),
    );
    const spans = receiver.trace(traceId);
    const request = one(spans, (s) => s.kind === 2, 'the request');
    assert.equal(request.service, 'gateway');
    assert.equal(request.parentSpanId, callerSpan, "the request span is the caller's span's child");
    assert.equal(request.name, 'POST /api/request/*');
    assert.equal(request.attributes['http.request.method'], 'POST');
    assert.equal(request.attributes['http.response.status_code'], 201);
    assert.equal(request.attributes['url.path'], '/api/request/order');

    const run = one(spans, (s) => s.name === 'saga order', 'the saga run');
    assert.equal(run.service, 'orchestrator');
    assert.equal(run.parentSpanId, request.spanId, "the run is the request's child (over NATS headers)");
    assert.equal(run.attributes['sagaway.outcome'], 'SUCCESS');
    assert.equal(run.attributes['sagaway.run.start'], 'request');

    for (const step of ['reserve', 'charge']) {
      const stepSpan = one(spans, (s) => s.name === `step ${step}`, `step ${step}`);
      assert.equal(stepSpan.parentSpanId, run.spanId, `step ${step} is the run's child`);
      const action = one(spans, (s) => s.kind === 5 && s.parentSpanId === stepSpan.spanId, `the action of ${step}`);
      assert.equal(action.service, 'worker', 'the action ran in the worker process');
      assert.equal(action.attributes['sagaway.handler'], 'shop');
      assert.equal(action.attributes['sagaway.action'], step === 'reserve' ? 'Reserve' : 'Charge');
      assert.equal(action.attributes['sagaway.action.version'], 0);
      assert.equal(action.attributes['sagaway.retry.attempt'], 1);
      assert.equal(action.attributes['sagaway.outcome'], 'SUCCESS');
    }
    // the context crossed NATS in headers: the saga request carried the request span, each event its step's span
    const runMsg = seen.find((m) => m.subject === `${prefix}.run.api` && m.traceparent?.includes(traceId));
    assert.equal(runMsg?.traceparent, `00-${traceId}-${request.spanId}-01`);
    const events = seen.filter((m) => m.subject.startsWith(`${prefix}.ev.`) && m.traceparent?.includes(traceId));
    assert.equal(events.length, 2, 'both events carried a traceparent header');
    // nothing of the payload (the body's password) is in any span
    assert.ok(!JSON.stringify(receiver.spans).includes('hunter2'), 'no payload in spans');
    // the configured export headers reach the collector
    assert.ok(receiver.requests.some((h) => h['x-otlp-key'] === 'k-123'));
  });

  test('a malformed traceparent starts a new trace', async () => {
    const before = new Set(receiver.spans.map((s) => s.traceId));
    const res = await call(port, '/api/request/order', {
      method: 'POST',
      body: {},
      headers: { ...CLIENT, traceparent: '00-zz-not-a-trace' },
    });
    assert.equal(res.status, 201);
    await waitUntil(() => receiver.spans.some((s) => s.kind === 2 && !before.has(s.traceId)), 15_000, 100);
    const request = receiver.spans.find((s) => s.kind === 2 && !before.has(s.traceId))!;
    assert.equal(request.parentSpanId, undefined, 'a root span');
  });

  test('tracing off (a gateway without OTEL_*): no span, no header', async () => {
    const { port: offPort } = await cluster.gateway({ SAGAWAY_TEST_LOG: log });
    const traceId = hex(16);
    const before = seen.length;
    const res = await call(offPort, '/api/request/order', {
      method: 'POST',
      body: {},
      headers: { ...CLIENT, traceparent: `00-${traceId}-${hex(8)}-01` },
    });
    assert.equal(res.status, 201);
    const runMsgs = seen.slice(before).filter((m) => m.subject === `${prefix}.run.api`);
    assert.equal(runMsgs.length, 1);
    assert.equal(runMsgs[0]!.traceparent, undefined, 'the off gateway sent no traceparent header');
    // the traced runner made a trace of its own; nothing joined the caller's
    await waitUntil(() => receiver.spans.filter((s) => s.name === 'saga order').length >= 3, 15_000, 100);
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(receiver.trace(traceId), [], "no span joined the off gateway's caller trace");
    assert.ok(
      !receiver.spans.some(
        (s) => s.kind === 2 && s.attributes['sagaway.request_id'] === res.headers.get('x-request-id'),
      ),
    );
  });

  test('a run resumed after its runner was killed (-9) is a new trace linked to the first', async () => {
    const traceId = hex(16);
    const id = `${prefix}-kill`;
    // counted before the request is made: counted after, on a loaded machine the file could be read
    // once Reserve was already in it, and the wait below would never see it
    const seen = (await handlerLog(log)).length;
    const pending = call(port, '/api/request/order', {
      method: 'POST',
      body: { sku: 'Y' },
      headers: { ...CLIENT, 'x-request-id': id, traceparent: `00-${traceId}-${hex(8)}-01` },
    });
    await waitUntil(async () => (await handlerLog(log)).slice(seen).some((l) => l.what === 'Reserve'), 10_000, 10);
    await api.proc.kill('SIGKILL');
    const survivor = await cluster.runner('api', undefined, env('orchestrator-2'));
    const cut = await pending;
    assert.equal(cut.status, 504, `the caller of the dead runner gets 504 (got ${cut.status})`);
    await waitUntil(
      async () =>
        ((await call(port, `/api/status/${id}`, { headers: CLIENT })).body as { status?: string }).status === 'DONE',
      20_000,
      200,
    );
    await waitUntil(
      () => receiver.spans.some((s) => s.service === 'orchestrator-2' && s.name === 'saga order'),
      15_000,
      100,
    );
    const resumed = one(
      receiver.spans,
      (s) => s.service === 'orchestrator-2' && s.name === 'saga order',
      'the resumed run',
    );
    assert.equal(resumed.attributes['sagaway.run.start'], 'resume');
    assert.notEqual(resumed.traceId, traceId, 'a trace of its own, not a child of the first');
    assert.equal(resumed.parentSpanId, undefined, 'a root span');
    assert.equal(resumed.links.length, 1, 'linked');
    assert.equal(resumed.links[0]!.traceId, traceId, 'linked to the first trace');
    // the first run span died with its process; the link names it all the same (the journal kept it)
    assert.match(resumed.links[0]!.spanId, /^[0-9a-f]{16}$/);
    const charge = one(receiver.trace(resumed.traceId), (s) => s.name === 'step charge', 'the resumed step');
    assert.equal(charge.parentSpanId, resumed.spanId);
    assert.ok(receiver.trace(resumed.traceId).some((s) => s.kind === 5 && s.parentSpanId === charge.spanId));
    assert.ok(survivor.proc.lines.some((l) => l['msg'] === 'resuming journaled saga'));
  });
});
