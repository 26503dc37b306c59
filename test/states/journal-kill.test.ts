import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startTestHost } from '../../src/testing/index.js';

/**
 * kill -9 of a process with a run in flight, on the embedded SQLite journal: the next process
 * resumes the run at the step after the last one it completed. Counted by the handler itself
 * (one line per invocation in a file): the first step ran once in all, the step that was in flight
 * when the process died ran again, and the run's outcome is the whole saga's.
 */

const self = fileURLToPath(import.meta.url);

/** The handler: `First` and `Second` note each call; `Second` never answers in a process with SAGAWAY_TEST_HANG=1. */
const COUNT_HANDLER = `
import { appendFileSync } from 'node:fs';
const note = (ctx, what) => appendFileSync(ctx.parameters.file, what + ' ' + ctx.idempotencyKey + ' ' + process.pid + '\\n');
export default {
  name: 'count',
  actions: {
    First: { 0: (_input, ctx) => { note(ctx, 'first'); return 1; } },
    Second: {
      0: (_input, ctx) => {
        note(ctx, 'second');
        return process.env.SAGAWAY_TEST_HANG === '1' ? new Promise(() => undefined) : 2;
      },
    },
  },
};
`;

function config(dir: string) {
  const file = join(dir, 'calls.log');
  const event = (id: string, action: string, output: string, to: string) => ({
    id,
    type: 'event',
    eventMeta: { handler: 'count', action, version: 0, outputElement: output, parameters: { file } },
    links: [{ to }],
  });
  return {
    states: { jr: { type: 'sqlite', file: join(dir, 'journal.db') } },
    runners: {
      r: {
        handlers: ['./count.mjs'],
        journal: 'jr',
        sagas: [
          {
            id: 'two',
            path: '/two',
            steps: [
              { id: 'start', type: 'start', links: [{ to: 'a' }] },
              event('a', 'First', '$.a', 'b'),
              event('b', 'Second', '$.b', 'ok'),
              { id: 'ok', type: 'success' },
            ],
          },
        ],
      },
    },
  };
}

const user = { sub: 'alice', roles: [], claims: {}, anonymous: false };

async function calls(dir: string): Promise<string[][]> {
  const text = await readFile(join(dir, 'calls.log'), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => l.split(' '));
}

async function until<T>(what: string, check: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > end) assert.fail(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

if (process.argv[2] === 'journal-child') {
  // The first life: start the run and hang in its second step until killed.
  const dir = process.argv[3] as string;
  const h = await startTestHost(config(dir) as never, { files: { 'count.mjs': COUNT_HANDLER } });
  void h.host.run('r', { method: 'GET', path: '/two', input: {}, query: {}, requestId: 'req-1', user });
} else {
  test('kill -9 mid-run on the SQLite journal: the next process resumes it; the first step ran once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sagaway-journal-kill-'));
    try {
      const child = fork(self, ['journal-child', dir], {
        env: { ...process.env, SAGAWAY_TEST_HANG: '1' },
        stdio: 'inherit',
      });
      const exited = new Promise((r) => child.once('exit', r));
      // the second step started: the first one is done and journaled
      await until('the second step runs', async () =>
        (await calls(dir)).some((c) => c[0] === 'second') ? true : undefined,
      );
      child.kill('SIGKILL');
      await exited;

      const next = await startTestHost(config(dir) as never, { files: { 'count.mjs': COUNT_HANDLER } });
      try {
        const reader = next.host.statusReader();
        const status = await until('the run is DONE', async () => {
          const s = await reader.lookup('jwt:alice', 'req-1');
          return s?.status === 'DONE' ? s : undefined;
        });
        assert.equal(status.outcome, 'SUCCESS');
        assert.deepEqual(status.response, { a: 1, b: 2 });
      } finally {
        await next.close();
      }
      const all = await calls(dir);
      const first = all.filter((c) => c[0] === 'first');
      const second = all.filter((c) => c[0] === 'second');
      assert.equal(first.length, 1, `the first step ran once in all: ${JSON.stringify(all)}`);
      assert.equal(first[0]![2], String(child.pid), 'in the killed process');
      assert.equal(second.length, 2, 'the step in flight ran again, in the next process');
      assert.notEqual(second[1]![2], String(child.pid));
      assert.equal(second[0]![1], second[1]![1], 'with the same idempotency key');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
}
