import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, test } from 'node:test';
import { createServer } from 'node:net';
import { runBlock, runnableBlocks, sagawayOnPath, stopBackground, type Session } from './runnable.js';

/**
 * Every block of docs/ marked `<!-- runnable -->` runs as written (test/docs/runnable.ts says
 * how). docs/first-saga.md needs a network install and has its own test (first-saga.int.test.ts).
 * Each document runs in a temporary folder that links the checkout's examples/, test/ and
 * schema/; the examples' SQLite files go to a temporary folder too.
 */

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? markdownFiles(join(dir, d.name)) : d.name.endsWith('.md') ? [join(dir, d.name)] : [],
  );
}

/** A free port for a document's background server (`PORT`; `localhost:8080` in its blocks). */
function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => done(port));
    });
  });
}

const data = mkdtempSync(join(tmpdir(), 'sagaway-docs-data-'));
const bin = sagawayOnPath();
after(() => {
  rmSync(data, { recursive: true, force: true });
  rmSync(bin, { recursive: true, force: true });
});

const files = markdownFiles('docs').filter((f) => !f.endsWith('first-saga.md'));
const blocks = files.flatMap((f) => runnableBlocks(readFileSync(f, 'utf8'), f));

describe('runnable blocks of docs/', () => {
  test('there are runnable blocks of each kind', () => {
    assert.ok(blocks.filter((b) => b.lang === 'sh').length >= 5, 'sh blocks');
    assert.ok(blocks.filter((b) => b.lang === 'yaml').length >= 5, 'yaml blocks');
  });
  for (const file of files) {
    const mine = blocks.filter((b) => b.file === file);
    if (mine.length === 0) continue;
    test(`${file}: ${mine.length} block(s)`, async () => {
      // A folder of its own (for `file` blocks) that sees the checkout's examples and fixtures.
      const cwd = mkdtempSync(join(data, 'doc-'));
      const port = await freePort();
      for (const shared of ['examples', 'test', 'schema']) symlinkSync(resolve(shared), join(cwd, shared), 'dir');
      const session: Session = {
        cwd,
        env: {
          ...process.env,
          PATH: `${bin}:${process.env['PATH'] ?? ''}`,
          TODO_DB: join(data, `${file.replace(/\W/g, '_')}-todos.db`),
          TASKS_DB: join(data, `${file.replace(/\W/g, '_')}-tasks.db`),
          LOG_LEVEL: 'warn',
          PORT: String(port),
          // What the documented configurations read with ${env:...} (validate connects to nothing).
          DATABASE_URL: 'postgres://127.0.0.1:5432/test',
          JWT_SECRET: 'a-secret-for-the-docs-test-of-32-bytes-or-more',
          SAGAWAY_CURSOR_KEY: '0123456789abcdef0123456789abcdef',
        },
        timeoutMs: 60_000,
        checkoutSagaway: true,
        port,
      };
      try {
        for (const block of mine) await runBlock(block, session);
      } finally {
        await stopBackground(session);
      }
      assert.equal(session.cwd, cwd, 'a docs block ends where it started');
    });
  }
});
