import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import type { Logger } from '../../src/core/logger.js';
import { startTestHost, type TestHost } from '../../src/testing/index.js';
import { NATS, natsUnavailableReason, skipOrFail, prefixStreams } from '../nats-available.js';

/**
 * Issue 19, item 2 across the broker (real NATS): the onFail saga's StartSaga steps travel on a
 * nats stream, so the nested runs start in the process that consumes it. The lineage goes with
 * the event: the nested runs know they descend from an onFail run and start no onFail, and their
 * ids derive from the step that started them. Without it each nested failure started a fresh
 * onFail run, and over NATS not even the in-process nesting limit stopped the chain.
 */

const natsDown = await natsUnavailableReason();

const RECORDER = `
globalThis.__lineageNats = [];
export default {
  name: 'rec',
  actions: {
    Boom: { 0: (_input, ctx) => ctx.fail('OUT_OF_STOCK', 'none left', 409) },
    Record: { 0: (_input, ctx) => { globalThis.__lineageNats.push(ctx.idempotencyKey); return {}; } },
  },
};
`;

const keys = () => (globalThis as { __lineageNats?: string[] }).__lineageNats ?? [];
const start = (to: string) => ({ id: 'start', type: 'start', links: [{ to }] });
const rec = (id: string, to: string) => ({
  id,
  type: 'event',
  eventMeta: { handler: 'rec', action: 'Record', version: 0 },
  links: [{ to }],
});
const remoteStartSaga = (id: string, to: string) => ({
  id,
  type: 'event',
  eventMeta: { action: 'StartSaga', version: 0, stream: 'nested', system: 'bus', parameters: { saga: 'chain' } },
  links: [{ to, when: ['*'] }],
});

describe('onFail lineage over NATS', { skip: natsDown ? skipOrFail(natsDown) : false }, () => {
  const prefix = `ofl${randomBytes(5).toString('hex')}`;
  let h: TestHost;
  const lines: Record<string, unknown>[] = [];
  before(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString('utf8').split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
        done();
      },
    });
    h = await startTestHost(
      {
        systems: { bus: { type: 'nats', servers: [NATS], prefix } },
        runners: {
          r: {
            handlers: ['saga', './rec.mjs'],
            streams: { nested: { handler: 'saga', system: 'bus' } },
            sagas: [
              {
                id: 'chain',
                path: '/chain',
                onFail: { saga: 'chain-failed' },
                steps: [
                  start('rec'),
                  rec('rec', 'boom'),
                  {
                    id: 'boom',
                    type: 'event',
                    eventMeta: { handler: 'rec', action: 'Boom', version: 0 },
                    links: [{ to: 'ok', when: ['SUCCESS'] }],
                  },
                  { id: 'ok', type: 'success' },
                ],
              },
              {
                id: 'chain-failed',
                path: '/chain-failed',
                timeout: '20s',
                steps: [
                  start('rec'),
                  rec('rec', 's1'),
                  remoteStartSaga('s1', 's2'),
                  remoteStartSaga('s2', 'ok'),
                  { id: 'ok', type: 'success' },
                ],
              },
            ],
          },
        },
      } as never,
      { files: { 'rec.mjs': RECORDER }, log: pino({ level: 'info' }, sink) as unknown as Logger },
    );
    const end = Date.now() + 5000;
    while (h.host.cluster?.connected !== true && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
  });

  after(async () => {
    await h?.close();
    const { connect } = await import('@nats-io/transport-node');
    const { jetstreamManager } = await import('@nats-io/jetstream');
    const nc = await connect({ servers: NATS });
    const jsm = await jetstreamManager(nc);
    for (const s of await prefixStreams(jsm, prefix)) await jsm.streams.delete(s).catch(() => undefined);
    await nc.close();
  });

  test('the nested runs started through NATS start no onFail; their ids derive from their steps', async () => {
    const result = await h.run('/chain', { runner: 'r' });
    assert.equal(result.outcome, 'FAIL');
    const id = result.runId!;
    const ended = (l: Record<string, unknown>) =>
      l['runId'] === id && (l['msg'] === 'onFail saga ended' || l['msg'] === 'onFail saga failed');
    for (let i = 0; i < 2000 && !lines.some(ended); i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(lines.some(ended), 'the onFail run ended');
    const started = lines.filter((l) => l['msg'] === 'starting onFail saga');
    assert.equal(started.length, 1, 'exactly one onFail run for the request');
    assert.deepEqual(
      keys().filter((k) => k.startsWith(id)),
      [`${id}:rec`, `${id}.onFail:rec`, `${id}.onFail.s1:rec`, `${id}.onFail.s2:rec`],
    );
  });
});
