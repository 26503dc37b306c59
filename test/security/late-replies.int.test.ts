import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { startTestHost, type TestHost } from '../../src/testing/index.js';
import { PROBE_HANDLER } from '../../src/testing/probe-handler.js';
import { NATS, natsUnavailableReason, skipOrFail, prefixStreams } from '../nats-available.js';
import type { NatsHub } from '../../src/systems/nats/hub.js';

/**
 * Issue 9 item 13 (c): replies that arrive after their event was cancelled must not grow the
 * orchestrator's memory. Against the real NATS (127.0.0.1:4222): sagas whose event runs 300 ms
 * on another runner are cancelled by their caller after 0-40 ms (some before the event is even
 * stored); the runner still answers each one later. Every map of the pending table is then back
 * to 0 (the answered-id memory is bounded). The `local` system keeps no table: a cancelled local
 * event is aborted in place, and its late end is dropped.
 */

const natsDown = await natsUnavailableReason();

async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const slow = (id: string, stream: string, system: string) => ({
  id,
  path: `/${id}`,
  steps: [
    { id: 'start', type: 'start', links: [{ to: 'e' }] },
    {
      id: 'e',
      type: 'event',
      eventMeta: { action: 'Slow', version: 0, stream, system, outputElement: '$.out', parameters: { ms: 300 } },
      links: [{ to: 'ok' }],
    },
    { id: 'ok', type: 'success' },
  ],
});

describe('late replies after a cancelled event', { skip: natsDown ? skipOrFail(natsDown) : false }, () => {
  const prefix = `late${randomBytes(5).toString('hex')}`;
  let h: TestHost;
  let replies = 0;
  let closeTap: () => Promise<void>;

  before(async () => {
    const { connect } = await import('@nats-io/transport-node');
    const nc = await connect({ servers: NATS });
    nc.subscribe(`${prefix}.reply.>`, {
      callback: () => {
        replies++;
      },
    });
    await nc.flush();
    closeTap = () => nc.close();
    h = await startTestHost(
      {
        systems: { bus: { type: 'nats', servers: [NATS], prefix } },
        runners: {
          orch: { sagas: [slow('remote', 'work', 'bus'), slow('here', 'lwork', 'local')] },
          worker: {
            handlers: ['./probe.mjs'],
            streams: { work: { handler: 'probe', system: 'bus' }, lwork: { handler: 'probe', system: 'local' } },
          },
        },
      } as never,
      { files: { 'probe.mjs': PROBE_HANDLER } },
    );
    await until(() => h.host.cluster?.connected === true, 5000, 'the nats system');
    // one answered call first: the worker's consumer is up and the directory knows it
    const warm = await h.run('/remote', { runner: 'orch', deadline: Date.now() + 10_000 });
    assert.equal(warm.outcome, 'SUCCESS', JSON.stringify(warm));
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

  test('nats: 30 cancelled events, 30 late replies, and the pending table is empty again', async () => {
    const pending = (h.host.cluster as NatsHub).pending;
    const before = replies;
    const N = 30;
    const results = await Promise.all(
      Array.from({ length: N }, async (_x, i) => {
        const ctl = new AbortController();
        if (i % 5 === 0)
          ctl.abort(); // cancelled before it is sent
        else setTimeout(() => ctl.abort(), i % 40);
        return h.run('/remote', { runner: 'orch', signal: ctl.signal });
      }),
    );
    for (const r of results) assert.notEqual(r.outcome, 'SUCCESS', 'every run was cancelled before its answer');
    // the runner answers the events that reached it, after their cancellation
    const sent = N - N / 5;
    await until(() => replies - before >= sent, 10_000, 'the late replies');
    // the last replies are read and dropped: the table empties (a leak never does, and times out)
    await until(
      () => pending.sizes().pending === 0 && pending.sizes().sequences === 0,
      10_000,
      'the pending table to empty',
    );
    const sizes = pending.sizes();
    assert.equal(sizes.pending, 0, 'no event is awaited');
    assert.equal(sizes.sequences, 0, 'no sequence entry is left behind');
    assert.ok(sizes.answered <= 10_000, 'the answered-id memory is bounded');

    const ok = await h.run('/remote', { runner: 'orch', deadline: Date.now() + 10_000 });
    assert.equal(ok.outcome, 'SUCCESS', 'the system still works');
    assert.deepEqual(pending.sizes().pending, 0);
  });

  test('local: a cancelled event is aborted in place, and its late end changes nothing', async () => {
    const g = globalThis as { __probeAborted?: number };
    const before = g.__probeAborted ?? 0;
    const results = await Promise.all(
      Array.from({ length: 10 }, () => {
        const ctl = new AbortController();
        setTimeout(() => ctl.abort(), 20);
        return h.run('/here', { runner: 'orch', signal: ctl.signal });
      }),
    );
    for (const r of results) assert.notEqual(r.outcome, 'SUCCESS');
    await until(() => (g.__probeAborted ?? 0) - before >= 10, 2000, 'the local actions to see their abort');
    // (The probe's Slow clears its own timer when it sees the abort, counted above: no late end is left to wait for.)
    const ok = await h.run('/here', { runner: 'orch', deadline: Date.now() + 10_000 });
    assert.equal(ok.outcome, 'SUCCESS');
  });
});
