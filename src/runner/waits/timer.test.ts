import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { startTestHost } from '../../testing/index.js';
import { PROBE_HANDLER } from '../../testing/probe-handler.js';

/** A clock the test moves. */
export function manualClock(start = Date.UTC(2026, 0, 1)): { now(): number; advance(ms: number): void } {
  let t = start;
  return { now: () => t, advance: (ms) => (t += ms) };
}

const user = { sub: 'alice', roles: [], claims: {}, anonymous: false };

/** A saga: an event, a 72 h timer, an event after it. */
export function timerConfig(journal: Record<string, unknown>): Record<string, unknown> {
  return {
    states: { jr: journal },
    runners: {
      r: {
        handlers: ['./probe.mjs'],
        journal: 'jr',
        sagas: [
          {
            id: 'cool-off',
            path: '/cool-off',
            methods: ['POST'],
            steps: [
              { id: 'start', type: 'start', links: [{ to: 'before' }] },
              {
                id: 'before',
                type: 'event',
                eventMeta: {
                  handler: 'probe',
                  action: 'Const',
                  version: 0,
                  outputElement: '$.before',
                  parameters: { value: 1 },
                },
                links: [{ to: 'pause' }],
              },
              { id: 'pause', type: 'wait', for: '72h', links: [{ to: 'after', when: ['SUCCESS'] }] },
              {
                id: 'after',
                type: 'event',
                eventMeta: {
                  handler: 'probe',
                  action: 'Const',
                  version: 0,
                  outputElement: '$.after',
                  parameters: { value: 2 },
                },
                links: [{ to: 'ok' }],
              },
              { id: 'ok', type: 'success' },
            ],
          },
        ],
      },
    },
  };
}

test('a 72 h timer parks the run (WAITING, nothing in process) and a poll after 72 h of clock ends it SUCCESS', async () => {
  const clock = manualClock();
  const t = await startTestHost(timerConfig({ type: 'sqlite', file: './journal.db' }) as never, {
    files: { 'probe.mjs': PROBE_HANDLER },
    clock,
  });
  try {
    const requestId = 'req-timer-1';
    const result = await t.host.run('r', {
      method: 'POST',
      path: '/cool-off',
      input: {},
      query: {},
      requestId,
      runId: requestId,
      user,
    });
    assert.equal(result.outcome, 'WAITING');
    assert.equal(result.http, 202);
    const body = result.response as { status: string; waitingOn: { kind: string; until: string; step: string } };
    assert.equal(body.status, 'WAITING');
    assert.deepEqual(body.waitingOn, {
      step: 'pause',
      kind: 'timer',
      until: new Date(clock.now() + 72 * 3600_000).toISOString(),
    });
    const reader = t.host.statusReader();
    assert.equal((await reader.lookup('jwt:alice', requestId))?.status, 'WAITING');
    assert.equal((await t.host.waits.stats()).parked, 1);

    // not due: a poll takes nothing
    clock.advance(72 * 3600_000 - 1);
    assert.equal(await t.host.waits.poll(), 0);
    assert.equal((await reader.lookup('jwt:alice', requestId))?.status, 'WAITING');

    clock.advance(1);
    assert.equal(await t.host.waits.poll(), 1);
    const done = await reader.lookup('jwt:alice', requestId);
    assert.equal(done?.status, 'DONE');
    assert.equal(done?.outcome, 'SUCCESS');
    assert.deepEqual(done?.response, { before: 1, after: 2 });
    assert.deepEqual(await t.host.waits.stats(), { parked: 0, due: 0, kept: 0 });
    // a second poll finds nothing: the timer fired once
    assert.equal(await t.host.waits.poll(), 0);
  } finally {
    await t.close();
  }
});

test('the parked run survives the process: a new host on the same SQLite journal fires the timer', async () => {
  const clock = manualClock();
  const files = { 'probe.mjs': PROBE_HANDLER };
  const first = await startTestHost(timerConfig({ type: 'sqlite', file: './journal.db' }) as never, { files, clock });
  const file = join(first.dir, 'journal.db');
  const requestId = 'req-timer-2';
  try {
    const result = await first.host.run('r', {
      method: 'POST',
      path: '/cool-off',
      input: {},
      query: {},
      requestId,
      runId: requestId,
      user,
    });
    assert.equal(result.outcome, 'WAITING');
  } finally {
    await first.host.close();
  }
  const second = await startTestHost(timerConfig({ type: 'sqlite', file }) as never, { files, clock });
  try {
    clock.advance(72 * 3600_000);
    assert.equal(await second.host.waits.poll(), 1);
    const done = await second.host.statusReader().lookup('jwt:alice', requestId);
    assert.equal(done?.outcome, 'SUCCESS');
  } finally {
    await second.close();
    await first.close();
  }
});
