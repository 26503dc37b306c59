import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/**
 * Every supported Node version (20, 22, 24) runs the SQLite state. On Node 24.19+ better-sqlite3
 * 12 aborted the whole process when GC collected a prepared statement (nodejs/node#65446), so
 * the state uses node:sqlite wherever the runtime has it and better-sqlite3 only on Node 20.
 * CI runs this file on all three versions (scripts/node-versions.sh).
 */

const dir = await mkdtemp(join(tmpdir(), 'sagaway-node-versions-'));
after(() => rm(dir, { recursive: true, force: true }));

const sqliteJs = fileURLToPath(new URL('../../src/states/sqlite.js', import.meta.url));
const driverJs = fileURLToPath(new URL('../../src/states/sqlite-driver.js', import.meta.url));
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
const hasNodeSqlite = major > 22 || (major === 22 && minor >= 13);

/**
 * A child process opens a SQLite state on a file, prepares 10 000 distinct statements (one list
 * shape per filter field; the state's statement cache keeps 200, so the rest become garbage),
 * forces GC every 500, then reports which driver ran and whether better-sqlite3 was loaded.
 */
const script = `
  import { createRequire } from 'node:module';
  const { SqliteState } = await import(${JSON.stringify(sqliteJs)});
  const { sqliteDriverName } = await import(${JSON.stringify(driverJs)});
  const s = new SqliteState({ alias: 'gc', file: process.argv[1], table: 'gc' });
  await s.init();
  await s.create('a', { f1: 1 });
  let seen = 0;
  for (let i = 0; i < 10000; i++) {
    seen += (await s.list({ filter: { ['f' + i]: 1 } })).list.length;
    if (i % 500 === 499) globalThis.gc();
  }
  await s.close();
  globalThis.gc();
  await new Promise((r) => setTimeout(r, 50));
  globalThis.gc();
  const required = Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes('better-sqlite3'));
  const addon = process.report.getReport().sharedObjects.some((f) => f.includes('better_sqlite3'));
  console.log(JSON.stringify({ driver: await sqliteDriverName(), seen, required, addon }));
`;

test('node versions: the SQLite driver is node:sqlite on Node 22.13+ and 24, better-sqlite3 on Node 20', async () => {
  const { sqliteDriverName } = (await import(driverJs)) as typeof import('../../src/states/sqlite-driver.js');
  assert.equal(await sqliteDriverName(), hasNodeSqlite ? 'node:sqlite' : 'better-sqlite3');
});

test('node versions: 10 000 statements prepared and collected by GC do not abort the process', async () => {
  const file = join(dir, 'gc.db');
  const { stdout, stderr } = await promisify(execFile)(
    process.execPath,
    ['--expose-gc', '--input-type=module', '-e', script, file],
    { timeout: 120_000 },
  ).catch((err: Error & { code?: number; signal?: string; stderr?: string }) => {
    // an abort (SIGABRT) lands here: say how the child died, not just that it did
    assert.fail(`child died: code ${err.code} signal ${err.signal}\n${(err.stderr ?? '').slice(0, 2000)}`);
  });
  const r = JSON.parse(stdout.trim()) as { driver: string; seen: number; required: boolean; addon: boolean };
  // nothing lost: the one record matched its own filter exactly once
  assert.equal(r.seen, 1);
  assert.equal(r.driver, hasNodeSqlite ? 'node:sqlite' : 'better-sqlite3');
  // on a runtime with node:sqlite the native addon is never loaded, nor its JavaScript
  assert.equal(r.required, !hasNodeSqlite);
  assert.equal(r.addon, !hasNodeSqlite);
  // node:sqlite's ExperimentalWarning (Node 22) is not printed; nothing else is either
  assert.doesNotMatch(stderr, /ExperimentalWarning|SQLite is an experimental/);
});
