import assert from 'node:assert/strict';
import { test } from 'node:test';
import { stringify } from 'yaml';
import { call, Cluster, dropStreams, reachable, skipOrFail, uniquePrefix } from './harness.js';

/**
 * The console of `sagaway gateway` shows the runs of a `sagaway runner` process (two OS
 * processes on the machine's NATS): the runner publishes its traces while the console watches.
 */

const NATS = 'nats://127.0.0.1:4222';
const available = await reachable(4222);

test(
  'sagaway gateway: its console feed shows a run made by a runner process, with its steps',
  { skip: available ? false : skipOrFail(`NATS not reachable at ${NATS}`) },
  async () => {
    const prefix = uniquePrefix('con');
    const cluster = await Cluster.create({
      'sagaway.yaml': stringify({
        gateway: { apis: [{ path: '/', runner: 'shop', public: true }] },
        systems: { bus: { type: 'nats', servers: [NATS], prefix } },
        defaultSystem: 'bus',
        runners: {
          shop: {
            sagas: [
              {
                id: 'greet',
                path: '/greet',
                steps: [
                  { id: 'start', type: 'start', links: [{ to: 'hi' }] },
                  { id: 'hi', type: 'transform', expression: '{ "hi": parameters.name }', links: [{ to: 'done' }] },
                  { id: 'done', type: 'success' },
                ],
              },
            ],
          },
        },
      }),
    });
    const controller = new AbortController();
    try {
      const { port } = await cluster.gateway();
      await cluster.runner('shop');
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
      while (!text.includes('"sagaId":"greet"')) {
        assert.ok(Date.now() < end, 'no run reached the console within 10 s');
        const res = await call(port, '/api/request/greet?name=ada');
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
      controller.abort();
      await reading;
    } finally {
      controller.abort();
      await cluster.close();
      await dropStreams(NATS, prefix);
    }
  },
);
