import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import type { Logger } from '../../core/logger.js';
import { startTestHost, type TestHost } from '../../testing/index.js';
import { MAX_ON_FAIL_RUNS } from './on-fail.js';

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

  /** The onFail records of the run `runId` (each test looks at its own runs only: no test depends on another's). */
  const seenFor = (runId: string | undefined) => seen().filter((s) => s.input['runId'] === runId);
  /** The log lines `msg` about the run `runId`. */
  const logged = (msg: string, runId: string | undefined) =>
    lines.filter((l) => l['msg'] === msg && l['runId'] === runId);

  async function until(what: string, cond: () => boolean, ms = 10_000): Promise<void> {
    const end = Date.now() + ms;
    while (!cond()) {
      if (Date.now() > end) assert.fail(`timed out waiting until ${what}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  test('runs after a failure with { parameters, error, runId }, without holding the response', async () => {
    const result = await h.run('/order', { method: 'POST', input: { fail: true, sku: 'A' } });
    assert.equal(result.outcome, 'FAIL');
    assert.equal(result.error?.code, 'UNHANDLED_STEP_FAILURE');
    assert.equal(logged('starting onFail saga', result.runId).length, 1, 'started when the run ended');
    assert.equal(seenFor(result.runId).length, 0, 'the response did not wait for the onFail saga');
    await until('the onFail saga recorded', () => seenFor(result.runId).length > 0);
    const [got] = seenFor(result.runId);
    assert.deepEqual(got?.input['parameters'], { fail: true, sku: 'A' });
    assert.equal((got?.input['error'] as { code: string }).code, 'UNHANDLED_STEP_FAILURE');
    assert.equal(got?.key, `${result.runId}.onFail:rec`, 'its keys derive from the failed run');
  });

  test('a success does not start it', async () => {
    const result = await h.run('/order', { method: 'POST', input: { fail: false } });
    assert.equal(result.outcome, 'SUCCESS');
    // The decision is made before the run's result is returned (a failure's start is logged by
    // then, as the test above shows): nothing was started, so nothing is left to wait for.
    assert.equal(logged('starting onFail saga', result.runId).length, 0);
    await h.host.runners.get('r')!.drain();
    assert.equal(seenFor(result.runId).length, 0);
  });

  test('its failure is logged, never returned; a run started by onFail starts no other', async () => {
    const result = await h.run('/fragile');
    assert.equal(result.error?.cause?.code, 'OUT_OF_STOCK', 'the caller gets its own error');
    assert.equal(logged('starting onFail saga', result.runId).length, 1);
    await until('the onFail saga failed', () => logged('onFail saga failed', result.runId).length > 0);
    const [failed] = logged('onFail saga failed', result.runId);
    assert.equal(failed?.['onFail'], 'broken');
    // broken has its own onFail (notify): its end, logged above, decided not to start it
    const own = `${result.runId}.onFail`;
    assert.equal(logged('starting onFail saga', own).length, 0, "broken's own onFail (notify) did not start");
    await h.host.runners.get('r')!.drain();
    assert.equal(seenFor(own).length, 0, "broken's own onFail (notify) did not run");
  });

  test('onFail runs in flight are bounded per runner: past the bound the saga is not started, and that is logged', async () => {
    const runner = h.host.runners.get('r')!;
    await runner.drain(); // the bound counts every onFail run of the runner: none of another test's
    runner.maxOnFailRuns = 2;
    try {
      // slow-notify takes 1.5 s: four fast failures find two onFail runs still in flight
      const runs: (string | undefined)[] = [];
      for (let i = 0; i < 4; i++) runs.push((await h.run('/many', { input: { n: i } })).runId);
      const refused = runs.filter((id) => logged('onFail saga not started: too many running', id).length === 1);
      assert.deepEqual(refused, runs.slice(2));
      await runner.drain();
      assert.deepEqual(
        runs.map((id) => seenFor(id).map((s) => (s.input['parameters'] as { n: number }).n)),
        [[0], [1], [], []],
      );
    } finally {
      runner.maxOnFailRuns = MAX_ON_FAIL_RUNS;
    }
  });
});
