import assert from 'node:assert/strict';
import { test } from 'node:test';
import { stringify } from 'yaml';
import { masked } from '../../src/gateway/console/mask.js';
import { call, Cluster, skipOrFail } from './harness.js';
import { NATS_SERVER, ownNatsAvailable, startOwnNats } from './own-nats.js';

/**
 * The console of `sagaway gateway` shows the runs of a `sagaway runner` process (two OS
 * processes on the test's own nats-server with the example's permissions) when the file turns
 * `gateway.console.natsTraces` on: the runner publishes its traces while the console watches,
 * its snapshots masked as the console masks them.
 */

const PASSWORD = 'hunter2-canary';

test(
  'sagaway gateway with natsTraces: its console feed shows a run made by a runner process, masked as the console masks',
  { skip: ownNatsAvailable() ? false : skipOrFail(`${NATS_SERVER} is not installed`) },
  async () => {
    const prefix = 'con';
    const nats = await startOwnNats({ prefix });
    const cluster = await Cluster.create({
      'sagaway.yaml': stringify({
        gateway: { apis: [{ path: '/', runner: 'shop', public: true }], console: { natsTraces: true } },
        systems: {
          bus: {
            type: 'nats',
            servers: ['${env:NATS_URL}'],
            user: '${env:NATS_USER}',
            pass: '${env:NATS_PASS}',
            prefix,
          },
        },
        defaultSystem: 'bus',
        runners: {
          shop: {
            sagas: [
              {
                id: 'greet',
                path: '/greet',
                methods: ['POST'],
                steps: [
                  { id: 'start', type: 'start', links: [{ to: 'hi' }] },
                  { id: 'hi', type: 'transform', expression: '{ "hi": "there" }', links: [{ to: 'done' }] },
                  { id: 'done', type: 'success' },
                ],
              },
            ],
          },
        },
      }),
    });
    const controller = new AbortController();
    // What crosses the broker on the trace subject, seen by the operator.
    const { connect } = await import('@nats-io/transport-node');
    const tap = await connect({ servers: nats.url, ...nats.credentials('admin') });
    const travelled: string[] = [];
    tap.subscribe(`${prefix}.console.trace`, {
      callback: (err, m) => {
        if (!err) travelled.push(m.string());
      },
    });
    try {
      const { port } = await cluster.gateway(nats.env('gateway'));
      await cluster.runner('shop', undefined, nats.env('runner'));
      const feed = await fetch(`http://127.0.0.1:${port}/console/api/feed`, { signal: controller.signal });
      assert.equal(feed.status, 200);
      const reader = feed.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = '';
      // The runner starts tracing once it hears the gateway's watch (at once, then every 2 s):
      // call until a run comes back.
      const end = Date.now() + 10_000;
      let requestId = '';
      const reading = (async () => {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          text += value;
        }
      })().catch(() => undefined);
      const body = { name: 'ada', password: PASSWORD, items: Array.from({ length: 150 }, (_, i) => i) };
      while (!text.includes('"sagaId":"greet"')) {
        assert.ok(Date.now() < end, 'no run reached the console within 10 s');
        const res = await call(port, '/api/request/greet', { method: 'POST', body });
        assert.equal(res.status, 200);
        requestId = res.headers.get('x-request-id')!;
        await new Promise((r) => setTimeout(r, 300));
      }
      const runs = text
        .split('\n')
        .filter((l) => l.startsWith('data: {"requestId"'))
        .map((l) => JSON.parse(l.slice(6)));
      const run = runs.find((r) => r.requestId === requestId) ?? runs.at(-1);
      assert.equal(run.runner, 'shop');
      assert.equal(run.outcome, 'SUCCESS');
      assert.deepEqual(
        run.steps.map((s: { step: string }) => s.step),
        ['start', 'hi', 'done'],
      );
      // Each snapshot is what the console's own masking makes of the payload (a list cut to its
      // first 100 values, credentials masked), not the runner's raw snapshot.
      const first = JSON.parse(run.steps[0].payload) as { parameters: { items: number[]; password: string } };
      assert.deepEqual(first, masked(first));
      assert.equal(first.parameters.items.length, 100);
      assert.equal(first.parameters.password, '••••');
      await tap.flush();
      assert.ok(travelled.length > 0, 'the tap saw the traces');
      assert.equal(travelled.filter((m) => m.includes(PASSWORD)).length, 0);
      assert.equal(travelled.filter((m) => m.includes(',149]')).length, 0, 'no snapshot travelled unmasked');
      const refused = new Set(nats.log().match(/\w+ Violation - User "\w+", Subject "[^"]+"/g) ?? []);
      assert.deepEqual([...refused], []);
      controller.abort();
      await reading;
    } finally {
      controller.abort();
      await tap.close();
      await cluster.close();
      await nats.stop();
    }
  },
);
