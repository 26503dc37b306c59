import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SagaRequest, SagaResult } from '../../core/types.js';
import { runOverNats, type RunConnection } from './run-client.js';

/**
 * The wait for a runner's answer (issue 26): a replica that died with the run never answers, so
 * from the deadline on its callers get their 504 without waiting the grace; while every replica
 * lives, the grace is kept (a run that ended at its deadline is still answered).
 */

const NOW = 1_000_000;
const request = (deadline: number): SagaRequest => ({
  method: 'POST',
  path: '/order',
  input: {},
  query: {},
  requestId: 'r1',
  user: null,
  deadline,
});

function connection(live: () => Set<string>): RunConnection {
  return {
    // the runner never answers, and the request's own timeout (the grace) is far away
    mux: { request: () => new Promise(() => undefined) } as unknown as RunConnection['mux'],
    names: { run: (r: string) => `P.run.${r}` } as unknown as RunConnection['names'],
    maxPayload: 1 << 20,
    runGraceMs: 60_000,
    errorTypes: undefined,
    inFlight: new Set(),
    liveInstances: live,
  };
}

/** Let the promise callbacks of the mocked timers run. */
const settle = () => new Promise((r) => setImmediate(r));

test('a replica of the runner gone at the deadline: 504 then, not after the grace', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: NOW });
  let live = new Set(['a', 'b']);
  const out: { answer?: SagaResult } = {};
  const answer = () => out.answer;
  void runOverNats(
    connection(() => live),
    'api',
    request(NOW + 10_000),
  ).then((r) => (out.answer = r));
  live = new Set(['b']);
  t.mock.timers.tick(9_999);
  await settle();
  assert.equal(answer(), undefined, 'not before the deadline');
  t.mock.timers.tick(1);
  await settle();
  assert.equal(answer()?.http, 504);
  assert.equal(answer()?.error?.code, 'SAGA_TIMEOUT');
});

test('every replica alive: the grace is kept; one that dies in it ends the wait when noticed', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: NOW });
  let live = new Set(['a', 'b']);
  const out: { answer?: SagaResult } = {};
  const answer = () => out.answer;
  void runOverNats(
    connection(() => live),
    'api',
    request(NOW + 10_000),
  ).then((r) => (out.answer = r));
  for (let i = 0; i < 20; i++) {
    t.mock.timers.tick(1_000);
    await settle();
  }
  assert.equal(answer(), undefined, 'still waiting 10 s past the deadline');
  live = new Set(['a']);
  t.mock.timers.tick(250);
  await settle();
  assert.equal(answer()?.http, 504);
});
