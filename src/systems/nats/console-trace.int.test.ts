import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { silentLogger } from '../../core/logger.js';
import { TraceBus, type RunRecord } from '../../core/trace.js';
import { startTestHost } from '../../testing/index.js';
import { NATS, natsUnavailableReason, skipOrFail } from '../../../test/nats-available.js';
import { TracePublisher, TraceSubscriber } from './console-trace.js';
import { NatsHub } from './hub.js';

/**
 * Traces across processes over real NATS: a runner host publishes its traced runs only while a
 * gateway's console watches, and stops when the watching stops.
 */

const natsDown = await natsUnavailableReason();

async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('console traces over NATS', { skip: natsDown ? skipOrFail(natsDown) : false }, () => {
  test('a watched gateway receives the runner process runs; unwatched, the runner traces nothing', async () => {
    const prefix = `ct${randomBytes(5).toString('hex')}`;
    const h = await startTestHost({
      gateway: { console: { natsTraces: true } },
      systems: { bus: { type: 'nats', servers: [NATS], prefix } },
      defaultSystem: 'bus',
      runners: {
        main: {
          sagas: [
            {
              id: 'hello',
              path: '/hello',
              steps: [
                { id: 'start', type: 'start', links: [{ to: 'greet' }] },
                { id: 'greet', type: 'transform', expression: '{ "hi": parameters.name }', links: [{ to: 'done' }] },
                { id: 'done', type: 'success' },
              ],
            },
          ],
        },
      },
    });
    const gateway = new NatsHub(h.settings, silentLogger());
    gateway.start();
    try {
      await until(() => gateway.connected && h.host.cluster!.connected, 5000, 'connected');
      assert.equal(h.host.traces.active, false, 'no console watches: nothing traced');
      const subscriber = new TraceSubscriber(gateway.gatewaySystem()!, 100);
      const runs: RunRecord[] = [];
      const stop = subscriber.listen((r) => runs.push(r));
      await until(() => h.host.traces.active, 3000, 'the runner heard the watch');
      const result = await h.run('/hello', { input: { name: 'ada' } });
      assert.equal(result.outcome, 'SUCCESS');
      await until(() => runs.length === 1, 3000, 'the trace arrived');
      assert.equal(runs[0]!.sagaId, 'hello');
      assert.deepEqual(
        runs[0]!.steps.map((s) => [s.step, s.status]),
        [
          ['start', 'SUCCESS'],
          ['greet', 'SUCCESS'],
          ['done', 'SUCCESS'],
        ],
      );
      assert.equal(runs[0]!.steps[1]!.payload, '{"hi":"ada"}', 'the payload after the transform');
      stop();
    } finally {
      await gateway.close();
      await h.close();
    }
  });

  test('without gateway.console.natsTraces a runner process never answers a watch: nothing traced crosses the broker', async () => {
    const prefix = `ct${randomBytes(5).toString('hex')}`;
    const h = await startTestHost({
      systems: { bus: { type: 'nats', servers: [NATS], prefix } },
      defaultSystem: 'bus',
      runners: {
        main: {
          sagas: [
            {
              id: 'hello',
              path: '/hello',
              steps: [
                { id: 'start', type: 'start', links: [{ to: 'done' }] },
                { id: 'done', type: 'success' },
              ],
            },
          ],
        },
      },
    });
    const { connect } = await import('@nats-io/transport-node');
    const client = await connect({ servers: NATS });
    try {
      await until(() => h.host.cluster!.connected, 5000, 'connected');
      // Anyone on the broker asks for traces, as a watched console would, and listens for them.
      const traces: string[] = [];
      client.subscribe(`${prefix}.console.trace`, {
        callback: (err, m) => {
          if (!err) traces.push(m.string());
        },
      });
      for (let i = 0; i < 3; i++) {
        client.publish(`${prefix}.console.watch`);
        await client.flush();
        // The runner's connection has handled the watch once its own ping comes back (one socket, in order).
        await (h.host.cluster as NatsHub).gatewaySystem()!.flush();
        const result = await h.run('/hello', {});
        assert.equal(result.outcome, 'SUCCESS');
      }
      assert.equal(h.host.traces.active, false, 'the runner never started tracing');
      await client.flush();
      assert.deepEqual(traces, []);
    } finally {
      await client.close();
      await h.close();
    }
  });

  test('a runner stops publishing a few watch intervals after the last watch', async () => {
    const prefix = `ct${randomBytes(5).toString('hex')}`;
    const h = await startTestHost({ systems: { bus: { type: 'nats', servers: [NATS], prefix } }, runners: {} });
    const settings = h.settings;
    const a = new NatsHub(settings, silentLogger());
    const b = new NatsHub(settings, silentLogger());
    a.start();
    b.start();
    const bus = new TraceBus();
    const publisher = new TracePublisher(a.gatewaySystem()!, bus, silentLogger(), 100);
    try {
      await until(() => a.connected && b.connected, 5000, 'connected');
      publisher.start();
      const subscriber = new TraceSubscriber(b.gatewaySystem()!, 100);
      const stop = subscriber.listen(() => undefined);
      await until(() => publisher.publishing && bus.active, 3000, 'publishing');
      stop();
      await until(() => !publisher.publishing && !bus.active, 2000, 'stopped after the watches stopped');
    } finally {
      publisher.stop();
      await a.close();
      await b.close();
      await h.close();
    }
  });
});
