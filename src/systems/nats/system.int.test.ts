import { Cancel } from '../../core/cancel.js';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { silentLogger } from '../../core/logger.js';
import { startTestHost, type TestHost } from '../../testing/index.js';
import { PROBE_HANDLER } from '../../testing/probe-handler.js';
import { settingsFor } from '../../testing/settings.js';
import { NatsHub } from './hub.js';
import { NATS, natsUnavailableReason, skipOrFail, prefixStreams } from '../../../test/nats-available.js';

/**
 * The nats system in one process (real NATS at 127.0.0.1:4222): a stream on a nats system goes
 * through NATS even when the orchestrator and the consuming runner share a process, and an event
 * that nobody acknowledges fails its step with EVENT_DELIVERY_EXHAUSTED after maxDeliver.
 */

const natsDown = await natsUnavailableReason();

async function dropStreams(prefix: string): Promise<void> {
  const { connect } = await import('@nats-io/transport-node');
  const { jetstreamManager } = await import('@nats-io/jetstream');
  const nc = await connect({ servers: NATS });
  const jsm = await jetstreamManager(nc);
  for (const s of await prefixStreams(jsm, prefix)) await jsm.streams.delete(s).catch(() => undefined);
  await nc.close();
}

async function until(check: () => Promise<boolean> | boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('nats system in process', { skip: natsDown ? skipOrFail(natsDown) : false }, () => {
  const prefix = `u${randomBytes(5).toString('hex')}`;
  let h: TestHost;
  const seen: string[] = [];
  let closeTap: () => Promise<void>;

  before(async () => {
    const { connect } = await import('@nats-io/transport-node');
    const nc = await connect({ servers: NATS });
    for (const subject of [`${prefix}.ev.>`, `${prefix}.reply.>`, `${prefix}b.reply.>`]) {
      nc.subscribe(subject, {
        callback: (_e, m) => {
          seen.push(m.subject);
        },
      });
    }
    closeTap = () => nc.close();
    h = await startTestHost(
      {
        systems: {
          bus: { type: 'nats', servers: [NATS], prefix },
          bus2: { type: 'nats', servers: [NATS], prefix: `${prefix}b` },
        },
        defaultSystem: 'bus',
        runners: {
          orch: {
            sagas: [
              {
                id: 'remote',
                path: '/remote',
                steps: [
                  { id: 'start', type: 'start', links: [{ to: 'e' }] },
                  {
                    id: 'e',
                    type: 'event',
                    eventMeta: {
                      action: 'Const',
                      version: 0,
                      stream: 'work',
                      outputElement: '$.out',
                      parameters: { value: 42 },
                    },
                    links: [{ to: 'ok' }],
                  },
                  { id: 'ok', type: 'success' },
                ],
              },
              {
                id: 'via2',
                path: '/via2',
                steps: [
                  { id: 'start', type: 'start', links: [{ to: 'e' }] },
                  {
                    id: 'e',
                    type: 'event',
                    eventMeta: {
                      action: 'Const',
                      version: 0,
                      stream: 'work',
                      responseSystem: 'bus2',
                      outputElement: '$.out',
                      parameters: { value: 7 },
                    },
                    links: [{ to: 'ok' }],
                  },
                  { id: 'ok', type: 'success' },
                ],
              },
            ],
          },
          worker: { handlers: ['./probe.mjs'], streams: { work: { handler: 'probe' } } },
        },
      } as never,
      { files: { 'probe.mjs': PROBE_HANDLER } },
    );
    await until(async () => {
      const r = await h.host.ready();
      return r['system:bus'] === true && r['system:bus2'] === true;
    }, 5000);
  });

  after(async () => {
    await h?.close();
    await closeTap?.();
    await dropStreams(prefix);
    await dropStreams(`${prefix}b`);
  });

  test('a stream on a nats system goes through NATS when both runners share the process', async () => {
    seen.length = 0;
    const r = await h.run('/remote', { runner: 'orch' });
    assert.equal(r.outcome, 'SUCCESS', JSON.stringify(r.error));
    assert.deepEqual(r.response, { out: 42 });
    await until(() => seen.length >= 2, 2000); // the tap is another connection: it may see them later
    assert.deepEqual(
      seen.map((s) => s.split('.').slice(0, 2).join('.')),
      [`${prefix}.ev`, `${prefix}.reply`],
    );
    assert.equal(seen[0], `${prefix}.ev.work.worker.1`);
  });

  test('an event larger than the server accepts fails with PAYLOAD_TOO_LARGE before it is sent', async () => {
    seen.length = 0;
    const r = await h.run('/remote', { runner: 'orch', input: { blob: 'x'.repeat(1024 * 1024 + 1) } });
    assert.equal(r.outcome, 'FAIL');
    assert.equal(r.http, 413);
    assert.equal((r.error?.cause ?? r.error)?.code, 'PAYLOAD_TOO_LARGE');
    assert.deepEqual(seen, [], 'nothing was published');
  });

  test('responseSystem: the reply comes back on another nats system', async () => {
    seen.length = 0;
    const r = await h.run('/via2', { runner: 'orch' });
    assert.equal(r.outcome, 'SUCCESS', JSON.stringify(r.error));
    assert.deepEqual(r.response, { out: 7 });
    await until(() => seen.length >= 2, 2000);
    assert.deepEqual(
      seen.map((s) => s.split('.').slice(0, 2).join('.')),
      [`${prefix}.ev`, `${prefix}b.reply`],
    );
  });

  test('an event that is never acknowledged fails with EVENT_DELIVERY_EXHAUSTED after maxDeliver deliveries', async () => {
    const p2 = `${prefix}x`;
    const settings = {
      ...h.settings,
      systems: settingsFor({
        systems: { bus: { type: 'nats', servers: [NATS], ackWait: '300ms', maxDeliver: 2, prefix: p2 } },
      }).systems,
    };
    const hub = new NatsHub(settings, silentLogger());
    hub.start();
    const sys = hub.systems.get('bus')!;
    await until(() => sys.isConnected, 5000);
    const { AckPolicy } = await import('@nats-io/jetstream');
    const { nanos } = await import('@nats-io/transport-node');
    // A "runner" that takes deliveries and dies before answering, every time.
    await sys.jetstream().manager.consumers.add(sys.names.eventsStream, {
      durable_name: 'dead',
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(300),
      max_deliver: 2,
      filter_subject: sys.names.event('work', 'ghost', '1'),
    });
    let deliveries = 0;
    const consumer = await sys.jetstream().client.consumers.get(sys.names.eventsStream, 'dead');
    const messages = await consumer.consume({ max_messages: 10 });
    void (async () => {
      for await (const _m of messages) deliveries++;
    })();
    sys.directory.accept({
      v: 1,
      instance: 'ghost-instance',
      runner: 'ghost',
      deployment: '1',
      system: 'bus',
      streams: { work: { handler: 'probe', dynamic: false } },
      handlers: { probe: { Const: [0] } },
      actions: [],
    });
    const t = Date.now();
    const reply = await sys.dispatch(
      {
        id: randomUUID(),
        runId: 'r',
        stepId: 's',
        idempotencyKey: 'r:s',
        stream: 'work',
        meta: { handler: 'probe', action: 'Const', version: 0 },
        payload: {},
        context: { request: { method: 'GET', path: '/', id: 'x', query: {} }, user: null },
        deadline: Date.now() + 10_000,
      },
      new Cancel(),
    );
    await messages.close();
    await hub.close();
    await dropStreams(p2);
    assert.equal(reply.status, 'FAIL');
    assert.equal(reply.error?.code, 'EVENT_DELIVERY_EXHAUSTED');
    assert.equal(deliveries, 2);
    assert.ok(Date.now() - t < 5000, 'well before the deadline');
  });
});
