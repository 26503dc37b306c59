import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { call, Cluster, handlerLog, skipOrFail, uniquePrefix, waitUntil, WORK_HANDLER } from './harness.js';
import { NATS_SERVER, ownNatsAvailable, startOwnNats, type OwnNats } from './own-nats.js';

/**
 * Gateway, an orchestrating runner and three replicas of a worker runner (two of deployment
 * "a", one of deployment "b"), each its own OS process, on the test's own nats-server with the
 * permissions of examples/distributed/nats-server.conf (the gateway and the runners connect as
 * their roles).
 */

const available = ownNatsAvailable();
const prefix = uniquePrefix('mp');
const SECRET = `s3cr3t-${prefix}`;
/** The request timeout: a fail-fast answer comes well before it. */
const TIMEOUT_MS = 8000;
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

function event(id: string, meta: Record<string, unknown>) {
  return {
    id,
    path: `/${id}`,
    methods: ['GET', 'POST'],
    steps: [
      { id: 'start', type: 'start', links: [{ to: 'e' }] },
      {
        id: 'e',
        type: 'event',
        eventMeta: { version: 0, outputElement: '$.out', ...meta },
        links: [
          { to: 'ok', when: ['SUCCESS'] },
          { to: 'bad', when: ['*'] },
        ],
      },
      { id: 'ok', type: 'success' },
      { id: 'bad', type: 'fail' },
    ],
  };
}

const config = {
  gateway: {
    auth: {
      apiKeys: [
        { name: 'alice', sha256: sha('alice-key') },
        { name: 'bob', sha256: sha('bob-key') },
      ],
    },
    apis: [{ path: '/', runner: 'api' }],
    limits: { timeout: `${TIMEOUT_MS}ms` },
  },
  systems: {
    bus: {
      type: 'nats',
      servers: ['${env:NATS_URL}'],
      user: '${env:NATS_USER}',
      pass: '${env:NATS_PASS}',
      ackWait: '2s',
      maxDeliver: 3,
      prefix,
    },
  },
  defaultSystem: 'bus',
  secrets: { from: 'env', prefix: 'SAGAWAY_SECRET_' },
  states: { jr: { type: 'sqlite', file: './journal.db' } },
  runners: {
    api: {
      journal: 'jr',
      sagas: [
        // handler omitted: inferred by the worker from its stream binding
        event('infer', {
          action: 'Echo',
          stream: 'work',
          deployments: ['a'],
          inputElement: 'parameters',
          parameters: { color: 'red', size: 'L' },
        }),
        event('defaults', { action: 'Echo', stream: 'work', deployments: ['a'], inputElement: 'parameters' }),
        event('both', { action: 'Count', stream: 'work' }),
        event('only-b', { action: 'Count', stream: 'work', deployments: ['b'] }),
        event('answers', { action: 'Count', stream: 'work', deployments: ['a'], responseStream: 'answers' }),
        event('v9', { handler: 'work', action: 'Echo', version: 9, stream: 'work', deployments: ['a'] }),
        event('nobody', { handler: 'work', action: 'Echo', stream: 'nowhere' }),
        event('secret', {
          action: 'Secret',
          stream: 'work',
          deployments: ['a'],
          inject: true,
          parameters: { auth: '#{{TOKEN}}' },
        }),
      ],
    },
    worker: {
      deployment: 'a',
      handlers: ['./work.mjs'],
      streams: {
        work: {
          handler: 'work',
          meta: { 'parameters.color': { override: 'blue' }, 'parameters.size': { default: 'M' } },
        },
      },
    },
  },
};

describe(
  'distributed: gateway and runners as separate processes',
  { skip: available ? false : skipOrFail(`${NATS_SERVER} is not installed`) },
  () => {
    let nats: OwnNats;
    let cluster: Cluster;
    let port: number;
    let logFile: string;
    const alice = { 'x-api-key': 'alice-key' };
    const captured: string[] = [];
    let closeTap: (() => Promise<void>) | undefined;
    let flushTap: (() => Promise<void>) | undefined;
    let bPort = 0;

    before(async () => {
      nats = await startOwnNats({ prefix });
      const { stringify } = await import('yaml');
      cluster = await Cluster.create({ 'sagaway.yaml': stringify(config), 'work.mjs': WORK_HANDLER });
      logFile = join(cluster.dir, 'handler.log');
      // Everything that crosses the broker under this prefix, to check that no secret does.
      const { connect } = await import('@nats-io/transport-node');
      const nc = await connect({ servers: nats.url, ...nats.credentials('admin') });
      // (Not the `run` subjects: a subscriber there would count as a responder.)
      for (const kind of ['ev', 'reply', 'resp', 'adv']) {
        nc.subscribe(`${prefix}.${kind}.>`, {
          callback: (_e, m) => {
            captured.push(Buffer.from(m.data).toString('utf8'));
          },
        });
      }
      closeTap = () => nc.close();
      flushTap = () => nc.flush();
      const env = { ...nats.env('runner'), SAGAWAY_TEST_LOG: logFile };
      const started = await Promise.all([
        cluster.runner('api', undefined, { ...env, SAGAWAY_TEST_TAG: 'api' }),
        cluster.runner('worker', 'a', { ...env, SAGAWAY_TEST_TAG: 'a1', SAGAWAY_SECRET_TOKEN: SECRET }),
        cluster.runner('worker', 'a', { ...env, SAGAWAY_TEST_TAG: 'a2', SAGAWAY_SECRET_TOKEN: SECRET }),
        cluster.runner('worker', 'b', { ...env, SAGAWAY_TEST_TAG: 'b1', SAGAWAY_SECRET_TOKEN: SECRET }),
      ]);
      bPort = started[3].port;
      ({ port } = await cluster.gateway(nats.env('gateway')));
      // The gateway connects in the background; the orchestrator learns the workers from their advertisements.
      await waitUntil(
        async () => (await call(port, '/api/request/infer', { headers: alice })).status === 200,
        10_000,
        100,
      );
    });

    /** Events deployment b ran (first deliveries that succeeded), from its runner's own metrics. */
    async function bEvents(): Promise<number> {
      const metrics = await (await fetch(`http://127.0.0.1:${bPort}/metrics`)).text();
      const ran = /sagaway_runner_events_total\{stream="work",status="SUCCESS",redelivered="false"\} (\d+)/.exec(
        metrics,
      );
      return Number(ran?.[1] ?? 0);
    }

    after(async () => {
      await closeTap?.();
      await cluster?.close();
      await nats?.stop();
    });

    test('remote event step: handler inferred from the stream binding; stream override and default applied by the worker', async () => {
      const r = await call(port, '/api/request/infer?q=1', { headers: alice });
      assert.equal(r.status, 200);
      const out = (r.body as { out: { input: unknown; parameters: Record<string, unknown>; tag: string } }).out;
      assert.deepEqual(out.input, { q: '1' });
      assert.equal(out.parameters['color'], 'blue', 'the stream override wins over the step');
      assert.equal(out.parameters['size'], 'L', 'the step replaces a stream default');
      assert.match(out.tag, /^a[12]$/);
      const d = await call(port, '/api/request/defaults', { headers: alice });
      assert.equal((d.body as { out: { parameters: Record<string, unknown> } }).out.parameters['size'], 'M');
    });

    test('deployments: with a list only those run it; without, each deployment once, replicas never both', async () => {
      const N = 10;
      const ranBefore = await bEvents();
      // This test's runs only (other tests run Count too): their keys are `<run id>:e`.
      const keys = new Set<string>();
      for (let i = 0; i < N; i++) {
        for (const path of ['/api/request/both', '/api/request/only-b']) {
          const r = await call(port, path, { headers: alice });
          assert.equal(r.status, 200);
          keys.add(`${r.headers.get('x-request-id')}:e`);
        }
      }
      const mine = async () => (await handlerLog(logFile)).filter((l) => l.what === 'Count' && keys.has(l.key));
      // The losing deployment's reply may still be on its way.
      await waitUntil(async () => (await mine()).length >= 3 * N, 5000);
      const lines = await mine();
      const byKey = new Map<string, string[]>();
      for (const l of lines) byKey.set(l.key, [...(byKey.get(l.key) ?? []), l.tag]);
      assert.equal(byKey.size, 2 * N, 'one idempotency key per saga run');
      let both = 0;
      let onlyB = 0;
      for (const tags of byKey.values()) {
        const a = tags.filter((t) => t.startsWith('a')).length;
        const b = tags.filter((t) => t === 'b1').length;
        if (tags.length === 2) {
          assert.deepEqual([a, b], [1, 1], `without a list: deployment a once and b once (${tags.join(',')})`);
          both++;
        } else {
          assert.deepEqual(tags, ['b1'], 'with deployments [b]: only b');
          onlyB++;
        }
      }
      assert.deepEqual([both, onlyB], [N, N]);
      const replicas = new Set(lines.filter((l) => l.tag.startsWith('a')).map((l) => l.tag));
      // The runner's own metrics agree: deployment b ran 2N events, all first deliveries.
      assert.equal((await bEvents()) - ranBefore, 2 * N);
      console.log(
        `# counts: ${N} runs without a list -> a:${N} b:${N}; ${N} runs with [b] -> b:${N} a:0; replicas of a used: ${[...replicas].join(',')}`,
      );
    });

    test('responseStream: the reply comes back through the JetStream response stream', async () => {
      const { connect } = await import('@nats-io/transport-node');
      const { jetstreamManager } = await import('@nats-io/jetstream');
      const nc = await connect({ servers: nats.url, ...nats.credentials('admin') });
      try {
        const jsm = await jetstreamManager(nc);
        const before = (await jsm.streams.info(`${prefix}_resp`)).state.messages;
        const r = await call(port, '/api/request/answers', { headers: alice });
        assert.equal(r.status, 200);
        assert.match((r.body as { out: { tag: string } }).out.tag, /^a[12]$/);
        // Stored by JetStream as it is delivered to the orchestrator: allow the store a moment.
        let stored = before;
        await waitUntil(async () => {
          stored = (await jsm.streams.info(`${prefix}_resp`)).state.messages;
          return stored > before;
        }, 2000).catch(() => undefined);
        assert.equal(stored, before + 1);
      } finally {
        await nc.close();
      }
    });

    test('fail fast: an action version nobody offers, a stream nobody consumes', async () => {
      const v = await call(port, '/api/request/v9', { headers: alice });
      assert.equal(v.status, 500);
      assert.equal((v.body as { code: string }).code, 'ACTION_VERSION_UNSUPPORTED');
      assert.ok(v.ms < TIMEOUT_MS / 4, `answered in ${v.ms} ms, not at the request timeout`);
      const n = await call(port, '/api/request/nobody', { headers: alice });
      assert.equal(n.status, 503);
      assert.equal((n.body as { code: string }).code, 'RUNNER_UNAVAILABLE');
      assert.equal(n.headers.get('retry-after'), '1');
      assert.ok(n.ms < TIMEOUT_MS / 4, `answered in ${n.ms} ms, not at the request timeout`);
    });

    test('secrets are resolved by the worker and never cross the broker', async () => {
      const r = await call(port, '/api/request/secret', { headers: alice });
      assert.equal(r.status, 200);
      assert.deepEqual((r.body as { out: unknown }).out, { authorised: true });
      // The tap is another connection: the server routed the reply to it before the orchestrator
      // got it; a round trip on the tap's connection (flush) comes back after those messages.
      await flushTap!();
      assert.ok(captured.length > 10, 'the tap saw the traffic');
      assert.ok(
        captured.some((m) => m.includes('#{{TOKEN}}')),
        'the event carried the placeholder',
      );
      assert.equal(captured.filter((m) => m.includes(SECRET)).length, 0);
    });

    test('GET /api/status/<requestId>: the caller reads the outcome; another caller gets 404', async () => {
      const id = `${prefix}-status-1`;
      const r = await call(port, '/api/request/infer', { headers: { ...alice, 'x-request-id': id } });
      assert.equal(r.status, 200);
      const runId = r.headers.get('x-request-id') ?? '';
      assert.notEqual(runId, id, 'the run id is the gateway one');
      const s = await call(port, `/api/status/${id}`, { headers: alice });
      assert.equal(s.status, 200);
      assert.deepEqual((await call(port, `/api/status/${runId}`, { headers: alice })).body, s.body);
      assert.equal((await call(port, `/api/status/${runId}`, { headers: { 'x-api-key': 'bob-key' } })).status, 404);
      const status = s.body as { status: string; outcome: string; http: number; response: { out: { tag: string } } };
      assert.equal(status.status, 'DONE');
      assert.equal(status.outcome, 'SUCCESS');
      assert.equal(status.http, 200);
      assert.match(status.response.out.tag, /^a[12]$/);
      assert.equal((await call(port, `/api/status/${id}`, { headers: { 'x-api-key': 'bob-key' } })).status, 404);
      assert.equal((await call(port, `/api/status/${id}`)).status, 404, 'anonymous is another caller');
      assert.equal((await call(port, `/api/status/${id}-unknown`, { headers: alice })).status, 404);
      // Bob reusing Alice's request id gets his own record and never overwrites hers.
      await call(port, '/api/request/only-b', { headers: { 'x-api-key': 'bob-key', 'x-request-id': id } });
      const again = await call(port, `/api/status/${id}`, { headers: alice });
      assert.match((again.body as typeof status).response.out.tag, /^a[12]$/);
    });

    test('the gateway and the runners had every permission they used: the server logged no violation', () => {
      const refused = new Set(nats.log().match(/\w+ Violation - User "\w+", Subject "[^"]+"/g) ?? []);
      assert.deepEqual([...refused], []);
    });

    test('no runner alive for an API: 503 RUNNER_UNAVAILABLE at once', async () => {
      const api = cluster.procs.find((p) => p.name === 'api/-' && !p.exited)!;
      await api.kill('SIGTERM');
      try {
        const r = await call(port, '/api/request/infer', { headers: alice });
        assert.equal(r.status, 503);
        assert.equal((r.body as { code: string }).code, 'RUNNER_UNAVAILABLE');
        assert.ok(r.ms < TIMEOUT_MS / 4, `answered in ${r.ms} ms, not at the request timeout`);
      } finally {
        // Another runner for the tests that may come after this one (no test depends on the order).
        await cluster.runner('api', undefined, {
          ...nats.env('runner'),
          SAGAWAY_TEST_LOG: logFile,
          SAGAWAY_TEST_TAG: 'api',
        });
        await waitUntil(
          async () => (await call(port, '/api/request/infer', { headers: alice })).status === 200,
          10_000,
          100,
        );
      }
    });
  },
);
