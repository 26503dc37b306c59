import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import type { Logger } from '../../core/logger.js';
import { startTestHost, type TestHost } from '../../testing/index.js';

/**
 * onFail is one run, whatever it starts (issue 19, item 2): a run that descends from an onFail
 * run (saga.StartSaga, at any depth) starts no onFail; nested runs get ids derived from the step
 * that started them; a request's runs have a budget (maxRunsPerRequest).
 */

const RECORDER = `
globalThis.__lineage = [];
export default {
  name: 'rec',
  actions: {
    Boom: { 0: (_input, ctx) => ctx.fail('OUT_OF_STOCK', 'none left', 409) },
    Record: { 0: (_input, ctx) => { globalThis.__lineage.push(ctx.idempotencyKey); return {}; } },
  },
};
`;

const keys = () => (globalThis as { __lineage?: string[] }).__lineage ?? [];
const start = (to: string) => ({ id: 'start', type: 'start', links: [{ to }] });
const rec = (id: string, to: string) => ({
  id,
  type: 'event',
  eventMeta: { handler: 'rec', action: 'Record', version: 0 },
  links: [{ to }],
});
const startSaga = (id: string, saga: string, to: string) => ({
  id,
  type: 'event',
  eventMeta: { handler: 'saga', action: 'StartSaga', version: 0, parameters: { saga } },
  links: [{ to, when: ['*'] }],
});

describe('onFail lineage and the run budget', () => {
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
            handlers: ['saga', './rec.mjs'],
            maxRunsPerRequest: 5,
            sagas: [
              {
                // fails; its onFail starts it twice: before issue 19, 511 onFail runs from one request
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
                steps: [
                  start('rec'),
                  rec('rec', 's1'),
                  startSaga('s1', 'chain', 's2'),
                  startSaga('s2', 'chain', 'ok'),
                  { id: 'ok', type: 'success' },
                ],
              },
              {
                // starts `leaf` ten times in a loop: past the budget (5 runs) the step fails
                id: 'fan',
                path: '/fan',
                steps: [
                  start('inc'),
                  {
                    id: 'inc',
                    type: 'transform',
                    expression: '$exists(n) ? n + 1 : 1',
                    outputElement: 'n',
                    links: [{ to: 'call' }],
                  },
                  {
                    id: 'call',
                    type: 'event',
                    eventMeta: { handler: 'saga', action: 'StartSaga', version: 0, parameters: { saga: 'leaf' } },
                    links: [{ to: 'more', when: ['SUCCESS'] }],
                  },
                  {
                    id: 'more',
                    type: 'condition',
                    expression: 'n < 10',
                    links: [
                      { to: 'inc', when: [true] },
                      { to: 'ok', when: ['*'] },
                    ],
                  },
                  { id: 'ok', type: 'success' },
                ],
              },
              { id: 'leaf', path: '/leaf', steps: [start('rec'), rec('rec', 'ok'), { id: 'ok', type: 'success' }] },
            ],
          },
        },
      } as never,
      { files: { 'rec.mjs': RECORDER }, log: pino({ level: 'info' }, sink) as unknown as Logger },
    );
  });
  after(() => h?.close());

  const settled = async (runId: string) => {
    const ended = (l: Record<string, unknown>) =>
      l['runId'] === runId && (l['msg'] === 'onFail saga ended' || l['msg'] === 'onFail saga failed');
    for (let i = 0; i < 500 && !lines.some(ended); i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(lines.some(ended), 'the onFail run ended');
  };

  test('an onFail saga that starts the saga it is the onFail of runs once; nested run ids derive from their steps', async () => {
    const result = await h.run('/chain');
    assert.equal(result.outcome, 'FAIL');
    const id = result.runId!;
    await settled(id);
    const started = lines.filter((l) => l['msg'] === 'starting onFail saga' && l['onFail'] === 'chain-failed');
    assert.equal(started.length, 1, 'exactly one onFail run for the request');
    const refused = lines.filter((l) => l['msg'] === 'onFail saga not started: the run descends from an onFail run');
    assert.deepEqual(refused.map((l) => l['runId']).sort(), [`${id}.onFail.s1`, `${id}.onFail.s2`]);
    assert.deepEqual(
      keys().filter((k) => k.startsWith(id)),
      [`${id}:rec`, `${id}.onFail:rec`, `${id}.onFail.s1:rec`, `${id}.onFail.s2:rec`],
      'every run of the request is named after the step that started it',
    );
  });

  test('fan-out past maxRunsPerRequest fails with RUN_BUDGET_EXCEEDED; repeated visits get #n', async () => {
    const result = await h.run('/fan');
    assert.equal(result.outcome, 'FAIL');
    assert.equal(result.error?.cause?.code, 'RUN_BUDGET_EXCEEDED');
    assert.match(result.error?.cause?.message ?? '', /maxRunsPerRequest: 5/);
    const id = result.runId!;
    assert.deepEqual(
      keys().filter((k) => k.startsWith(id)),
      [`${id}.call:rec`, `${id}.call#2:rec`, `${id}.call#3:rec`, `${id}.call#4:rec`],
      'the request run and four nested runs: five, its budget',
    );
  });

  test('each request has its own budget', async () => {
    const a = await h.run('/leaf');
    const b = await h.run('/fan');
    assert.equal(a.outcome, 'SUCCESS');
    assert.equal(b.error?.cause?.code, 'RUN_BUDGET_EXCEEDED');
  });
});
