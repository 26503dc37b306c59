import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import type { Logger } from '../../core/logger.js';
import { startTestHost, type TestHost } from '../../testing/index.js';
import { MAX_ON_FAIL_RUNS } from './runner.js';

/**
 * A saga's `onFail` (issue 12): after a FAIL and its compensations, the named saga runs with
 * { parameters, error, runId }, detached from the caller's response; its failure is logged and
 * never returned; a success does not start it.
 */

const RECORDER = `
globalThis.__onFail = [];
export default {
  name: 'rec',
  actions: {
    Ok: { 0: () => ({ done: true }) },
    Boom: { 0: (_input, ctx) => ctx.fail('OUT_OF_STOCK', 'none left', 409) },
    Record: {
      0: async (input, ctx) => {
        await new Promise((r) => setTimeout(r, ctx.parameters.ms ?? 0));
        globalThis.__onFail.push({ input, key: ctx.idempotencyKey });
        return {};
      },
    },
  },
};
`;

const ev = (id: string, action: string, next: string, extra: Record<string, unknown> = {}) => ({
  id,
  type: 'event',
  eventMeta: { handler: 'rec', action, version: 0, ...extra },
  links: [{ to: next, when: ['SUCCESS'] }],
});

const seen = () => (globalThis as { __onFail?: { input: Record<string, unknown>; key: string }[] }).__onFail ?? [];

describe('onFail', () => {
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
        runners: {
          r: {
            handlers: ['./rec.mjs'],
            sagas: [
              {
                id: 'order',
                path: '/order',
                methods: ['POST', 'GET'],
                onFail: { saga: 'notify' },
                steps: [
                  { id: 'start', type: 'start', links: [{ to: 'c' }] },
                  {
                    id: 'c',
                    type: 'condition',
                    expression: 'parameters.fail = true',
                    links: [
                      { to: 'boom', when: [true] },
                      { to: 'fine', when: ['*'] },
                    ],
                  },
                  ev('boom', 'Boom', 'ok'),
                  ev('fine', 'Ok', 'ok'),
                  { id: 'ok', type: 'success' },
                ],
              },
              {
                id: 'notify',
                path: '/notify',
                steps: [
                  { id: 'start', type: 'start', links: [{ to: 'rec' }] },
                  ev('rec', 'Record', 'ok', { parameters: { ms: 150 } }),
                  { id: 'ok', type: 'success' },
                ],
              },
              {
                id: 'many',
                path: '/many',
                onFail: { saga: 'slow-notify' },
                steps: [
                  { id: 'start', type: 'start', links: [{ to: 'boom' }] },
                  ev('boom', 'Boom', 'ok'),
                  { id: 'ok', type: 'success' },
                ],
              },
              {
                id: 'slow-notify',
                path: '/slow-notify',
                steps: [
                  { id: 'start', type: 'start', links: [{ to: 'rec' }] },
                  ev('rec', 'Record', 'ok', { parameters: { ms: 1500 } }),
                  { id: 'ok', type: 'success' },
                ],
              },
              {
                id: 'fragile',
                path: '/fragile',
                onFail: { saga: 'broken' },
                steps: [
                  { id: 'start', type: 'start', links: [{ to: 'boom' }] },
                  ev('boom', 'Boom', 'ok'),
                  { id: 'ok', type: 'success' },
                ],
              },
              {
                id: 'broken',
                path: '/broken',
                onFail: { saga: 'notify' },
                steps: [
                  { id: 'start', type: 'start', links: [{ to: 'boom' }] },
                  ev('boom', 'Boom', 'ok'),
                  { id: 'ok', type: 'success' },
                ],
              },
            ],
          },
        },
      } as never,
      { files: { 'rec.mjs': RECORDER }, log: pino({ level: 'info' }, sink) as unknown as Logger },
    );
  });
  after(() => h?.close());

  test('runs after a failure with { parameters, error, runId }, without holding the response', async () => {
    const result = await h.run('/order', { method: 'POST', input: { fail: true, sku: 'A' } });
    assert.equal(result.outcome, 'FAIL');
    assert.equal(result.error?.code, 'UNHANDLED_STEP_FAILURE');
    assert.equal(seen().length, 0, 'the response did not wait for the onFail saga');
    for (let i = 0; i < 100 && seen().length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    const [got] = seen();
    assert.deepEqual(got?.input['parameters'], { fail: true, sku: 'A' });
    assert.equal((got?.input['error'] as { code: string }).code, 'UNHANDLED_STEP_FAILURE');
    assert.equal(got?.input['runId'], result.runId);
    assert.equal(got?.key, `${result.runId}.onFail:rec`, 'its keys derive from the failed run');
  });

  test('a success does not start it', async () => {
    const before = seen().length;
    const result = await h.run('/order', { method: 'POST', input: { fail: false } });
    assert.equal(result.outcome, 'SUCCESS');
    await new Promise((r) => setTimeout(r, 250));
    assert.equal(seen().length, before);
  });

  test('its failure is logged, never returned; a run started by onFail starts no other', async () => {
    const before = seen().length;
    const result = await h.run('/fragile');
    assert.equal(result.error?.cause?.code, 'OUT_OF_STOCK', 'the caller gets its own error');
    for (let i = 0; i < 100 && !lines.some((l) => l['msg'] === 'onFail saga failed'); i++)
      await new Promise((r) => setTimeout(r, 10));
    const failed = lines.find((l) => l['msg'] === 'onFail saga failed');
    assert.equal(failed?.['onFail'], 'broken');
    assert.equal(failed?.['runId'], result.runId);
    await new Promise((r) => setTimeout(r, 250));
    assert.equal(seen().length, before, "broken's own onFail (notify) did not run");
  });

  test('onFail runs in flight are bounded per runner: past the bound the saga is not started, and that is logged', async () => {
    const runner = h.host.runners.get('r')!;
    runner.maxOnFailRuns = 2;
    try {
      const before = seen().length;
      // slow-notify takes 1.5 s: four fast failures find two onFail runs still in flight
      for (let i = 0; i < 4; i++) await h.run('/many', { input: { n: i } });
      const refused = lines.filter((l) => l['msg'] === 'onFail saga not started: too many running');
      assert.equal(refused.length, 2);
      for (let i = 0; i < 300 && seen().length < before + 2; i++) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 200));
      assert.deepEqual(
        seen()
          .slice(before)
          .map((s) => (s.input['parameters'] as { n: number }).n),
        [0, 1],
      );
    } finally {
      runner.maxOnFailRuns = MAX_ON_FAIL_RUNS;
    }
  });
});
