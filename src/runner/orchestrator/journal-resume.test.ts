import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startTestHost } from '../../testing/index.js';
import { PROBE_HANDLER } from '../../testing/probe-handler.js';

/** Embedded mode (no NATS): a process that starts resumes what a previous life left RUNNING in its SQLite journal. */
test('embedded: runs left RUNNING in the SQLite journal are finished by the next process', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'sagaway-journal-'));
  const config = {
    states: { jr: { type: 'sqlite', file: join(dir, 'journal.db') } },
    runners: {
      r: {
        handlers: ['./probe.mjs'],
        journal: 'jr',
        sagas: [
          {
            id: 'slow',
            path: '/slow',
            steps: [
              { id: 'start', type: 'start', links: [{ to: 'a' }] },
              {
                id: 'a',
                type: 'event',
                eventMeta: {
                  handler: 'probe',
                  action: 'Const',
                  version: 0,
                  outputElement: '$.a',
                  parameters: { value: 1 },
                },
                links: [{ to: 'b' }],
              },
              {
                id: 'b',
                type: 'event',
                eventMeta: {
                  handler: 'probe',
                  action: 'Slow',
                  version: 0,
                  outputElement: '$.b',
                  parameters: { ms: 400 },
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
  const files = { 'probe.mjs': PROBE_HANDLER };
  try {
    const first = await startTestHost(config as never, { files });
    const user = { sub: 'alice', roles: [], claims: {}, anonymous: false };
    const running = first.host.run('r', {
      method: 'GET',
      path: '/slow',
      input: {},
      query: {},
      requestId: 'req-1',
      user,
    });
    // The run is journaled RUNNING (whichever step is in flight: test/states/journal-kill.test.ts
    // checks a kill in the middle of the second step, counting the first step's calls).
    const reader1 = first.host.statusReader();
    const until = Date.now() + 5000;
    while ((await reader1.lookup('jwt:alice', 'req-1'))?.status !== 'RUNNING' && Date.now() < until)
      await new Promise((r) => setTimeout(r, 5));
    assert.equal((await reader1.lookup('jwt:alice', 'req-1'))?.status, 'RUNNING');
    await first.close(); // the process "dies" with the run in flight
    await running.catch(() => undefined);

    const second = await startTestHost(config as never, { files });
    const reader = second.host.statusReader();
    const end = Date.now() + 5000;
    let status = await reader.lookup('jwt:alice', 'req-1');
    while (status?.status !== 'DONE' && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 50));
      status = await reader.lookup('jwt:alice', 'req-1');
    }
    await second.close();
    assert.equal(status?.status, 'DONE');
    assert.equal(status?.outcome, 'SUCCESS');
    assert.deepEqual(status?.response, { a: 1, b: { slow: true } });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
