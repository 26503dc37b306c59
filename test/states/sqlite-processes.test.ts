import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { SqliteState } from '../../src/states/sqlite.js';

/**
 * Several processes (replicas of one runner) share a SQLite file: they open it at the same time
 * and write with the same idempotency keys; each key has one effect across all of them.
 */

const self = fileURLToPath(import.meta.url);

if (process.argv[2] === 'sqlite-writer') {
  const s = new SqliteState({ alias: 't', file: process.argv[3] as string, table: 't' });
  await s.init();
  for (let i = 0; i < 100; i++) await s.create(`p${process.pid}-${i}`, { i }, { idempotencyKey: `k${i % 25}` });
  for (let i = 0; i < 20; i++) await s.update('shared', { [`p${process.pid}`]: i });
  await s.close();
  process.exit(0);
} else {
  test('sqlite: processes sharing one file write each idempotency key once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sagaway-sqlite-procs-'));
    try {
      const file = join(dir, 'shared.db');
      const setup = new SqliteState({ alias: 't', file, table: 't' });
      await setup.init();
      await setup.create('shared', {});
      await setup.close();
      const kids = Array.from({ length: 4 }, () => fork(self, ['sqlite-writer', file], { stdio: 'inherit' }));
      const codes = await Promise.all(kids.map((k) => new Promise((resolve) => k.on('exit', resolve))));
      assert.deepEqual(codes, [0, 0, 0, 0]);
      const s = new SqliteState({ alias: 't', file, table: 't' });
      await s.init();
      const page = await s.list({ limit: 1000 });
      assert.equal(page.list.length, 26, 'one record per key, plus the shared one');
      // 4 processes x 20 updates, none lost
      assert.equal((await s.get('shared'))?.version, 81);
      await s.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
}
