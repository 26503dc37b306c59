import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { startTestHost, type TestHost } from '../../src/testing/index.js';
import { PROBE_HANDLER } from '../../src/testing/probe-handler.js';
import { HOSTILE_TEXTS, assertNoLeak, capturingLogger, secrets } from './inject-canary.js';
import { NATS, natsUnavailableReason, skipOrFail, prefixStreams } from '../nats-available.js';

/**
 * Issue 9 item 1 across the broker (real NATS at 127.0.0.1:4222): an action record whose event
 * travels on a nats stream. The TakeAction parameters travel with the event and the executing
 * runner fills the record's slots in its one inject pass: the caller's text arrives literally,
 * the record's own secret resolves, and no form of the canary is in the answer, the logs, or any
 * message on the broker (every subject of the prefix is tapped).
 */

const natsDown = await natsUnavailableReason();

const RECORDS = [
  {
    id: 'remote',
    data: {
      handler: 'probe',
      action: 'Seen',
      version: 0,
      stream: 'work',
      system: 'bus',
      inject: true,
      parameters: { note: '%%param_note%%', inline: '<%%param_note%%>', token: '#{{API_TOKEN}}' },
    },
  },
];

describe('second-order inject over NATS', { skip: natsDown ? skipOrFail(natsDown) : false }, () => {
  const prefix = `soi${randomBytes(5).toString('hex')}`;
  let h: TestHost;
  const wire: string[] = [];
  const captured = capturingLogger();
  let closeTap: () => Promise<void>;

  before(async () => {
    const { connect } = await import('@nats-io/transport-node');
    const nc = await connect({ servers: NATS });
    nc.subscribe(`${prefix}.>`, {
      callback: (_e, m) => {
        wire.push(Buffer.from(m.data).toString('utf8'));
      },
    });
    await nc.flush();
    closeTap = () => nc.close();
    h = await startTestHost(
      {
        systems: { bus: { type: 'nats', servers: [NATS], prefix } },
        states: { actions: { type: 'memory', seed: './actions.json' } },
        runners: {
          orch: {
            handlers: ['action'],
            sagas: [
              {
                id: 'rec',
                path: '/rec',
                methods: ['POST'],
                steps: [
                  { id: 'start', type: 'start', links: [{ to: 'e' }] },
                  {
                    id: 'e',
                    type: 'event',
                    autoFail: true,
                    eventMeta: {
                      handler: 'action',
                      action: 'TakeAction',
                      version: 0,
                      inject: true,
                      inputElement: 'parameters',
                      outputElement: '$.out',
                      parameters: { action: 'remote', note: '%%note%%' },
                    },
                    links: [{ to: 'ok' }],
                  },
                  { id: 'ok', type: 'success', outputElement: 'out' },
                ],
              },
            ],
          },
          worker: { handlers: ['./probe.mjs'], streams: { work: { handler: 'probe', system: 'bus' } } },
        },
      } as never,
      { files: { 'probe.mjs': PROBE_HANDLER, 'actions.json': JSON.stringify(RECORDS) }, secrets, log: captured.log },
    );
    const end = Date.now() + 5000;
    while (h.host.cluster?.connected !== true && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
  });

  after(async () => {
    await h?.close();
    await closeTap?.();
    const { connect } = await import('@nats-io/transport-node');
    const { jetstreamManager } = await import('@nats-io/jetstream');
    const nc = await connect({ servers: NATS });
    const jsm = await jetstreamManager(nc);
    for (const s of await prefixStreams(jsm, prefix)) await jsm.streams.delete(s).catch(() => undefined);
    await nc.close();
  });

  test('every hostile text arrives literally on the remote runner; the canary is nowhere', async () => {
    for (const note of HOSTILE_TEXTS) {
      const r = await h.run('/rec', { runner: 'orch', method: 'POST', input: { note }, deadline: Date.now() + 10_000 });
      assertNoLeak(JSON.stringify(r), note);
      assert.equal(r.outcome, 'SUCCESS', JSON.stringify(r));
      const seen = r.response as { parameters: Record<string, unknown> };
      assert.equal(seen.parameters['note'], note);
      assert.equal(seen.parameters['inline'], `<${note}>`);
      assert.equal(seen.parameters['token'], '[REDACTED]', 'the record resolved its own secret on the remote runner');
    }
    assert.ok(
      wire.some((m) => m.includes('"params"')),
      'the slot values travelled with the event',
    );
    assertNoLeak(wire.join('\n'), 'the broker');
    assert.ok(!wire.join('\n').includes('tok-00aa11bb22cc33dd44ee'), 'no secret on the broker');
    assertNoLeak(captured.lines.join(''), 'the log');
  });
});
