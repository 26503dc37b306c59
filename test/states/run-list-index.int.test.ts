import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import pg from 'pg';
import { JournalRunAdmin } from '../../src/runner/orchestrator/run-admin.js';
import { PostgresState } from '../../src/states/postgres.js';
import { SqliteState } from '../../src/states/sqlite.js';
import type { SqlStatement } from '../../src/states/sqlite-driver.js';
import { settingsFor } from '../../src/testing/settings.js';
import { pgUnavailableReason, skipOrFail } from './pg-available.js';

/**
 * The run list (`GET /api/runs`, issue 22) reads the journal through its index on (status,
 * startedAt, id), a range scan newest first, and finds a run by id through the index on runId:
 * the statements it sends are captured and explained on a journal of 20,000 runs, on the real
 * PostgreSQL and on SQLite. No page reads the table in full, nor sorts it.
 */

const URL = process.env['SAGAWAY_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const reason = await pgUnavailableReason(URL);
const settings = settingsFor();

/** 20,000 runs: DONE mostly, some SUSPENDED, in two sagas, a correlation index record per ten. */
const ROWS = (status: string) =>
  `CASE WHEN g % 500 = 0 THEN 'SUSPENDED' WHEN g % 10 = 0 THEN ${status} ELSE 'DONE' END`;

interface Plan {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: Plan[];
}
const nodes = (p: Plan): Plan[] => [p, ...(p.Plans ?? []).flatMap(nodes)];

test(
  'run list: a range scan of the (status, startedAt) index on PostgreSQL (EXPLAIN)',
  { skip: reason ? skipOrFail(reason) : false },
  async () => {
    const table = `rix_${process.pid}_${Date.now().toString(36)}`;
    const client = new pg.Client({ connectionString: URL });
    await client.connect();
    const state = new PostgresState({ alias: 'jr', url: URL, table, poolSize: 2 });
    after(async () => {
      await state.close();
      await client.query(`drop table if exists "${table}", "${table}_idem"`);
      await client.end();
    });
    await state.init();
    await client.query(
      `INSERT INTO "${table}" (id, version, data) SELECT 'run-' || md5(g::text), 2, jsonb_build_object('status', ${ROWS(`'INDEX'`)},` +
        ` 'runner', 'api', 'deployment', '1', 'sagaId', CASE WHEN g % 2 = 0 THEN 'a' ELSE 'b' END, 'runId', 'r' || g,` +
        ` 'requestId', 'r' || g, 'startedAt', 1000 + g, 'updatedAt', 1000 + g) FROM generate_series(1, 20000) g`,
    );
    const admin = new JournalRunAdmin(settings, [state]);
    await admin.list({ limit: 1 }); // the indexes
    await client.query(`ANALYZE "${table}"`);

    const sent: { sql: string; params: unknown[] }[] = [];
    const s = state as unknown as { run(sql: string, params?: unknown[]): Promise<unknown> };
    const run = s.run.bind(state);
    s.run = (sql, params) => {
      sent.push({ sql, params: params ?? [] });
      return run(sql, params);
    };
    const first = await admin.list({ limit: 20 });
    assert.equal(first.runs.length, 20);
    assert.equal(first.runs[0]!.startedAt, 21000, 'the newest run');
    const second = await admin.list({ limit: 20, cursor: first.next! });
    assert.ok(second.runs[0]!.startedAt < first.runs[19]!.startedAt);
    const suspended = await admin.list({ limit: 20, status: 'SUSPENDED', saga: 'a', since: 5000, until: 20000 });
    assert.ok(suspended.runs.length > 0 && suspended.runs.every((r) => r.status === 'SUSPENDED' && r.sagaId === 'a'));
    await assert.rejects(admin.redrive('r-none', { fromStep: 'failed', dryRun: true, reason: '', by: 'x' }), {
      code: 'RUN_NOT_FOUND',
    });
    s.run = run;

    const lists = sent.filter((q) => q.sql.startsWith('SELECT') && q.sql.includes(' LIMIT '));
    assert.equal(lists.length, 4 + 4 + 1 + 1, 'one list per status and page, one lookup by run id');
    for (const q of lists) {
      const r = await client.query<{ 'QUERY PLAN': [{ Plan: Plan }] }>(`EXPLAIN (FORMAT JSON) ${q.sql}`, q.params);
      const plan = nodes(r.rows[0]!['QUERY PLAN'][0].Plan);
      const onTable = plan.filter((n) => n['Relation Name'] === table);
      const names = JSON.stringify(plan.map((n) => [n['Node Type'], n['Index Name']]));
      assert.ok(onTable.length > 0, names);
      assert.ok(
        onTable.every((n) => n['Node Type'].includes('Index')),
        `no table scan: ${names}`,
      );
      assert.ok(!plan.some((n) => n['Node Type'] === 'Sort' && q.sql.includes('startedAt')), `no sort: ${names}`);
      assert.ok(
        onTable.some((n) => n['Index Name']?.startsWith(`${table}_ix_`)),
        `through a journal index: ${names}`,
      );
    }
  },
);

test('run list: a range scan of the (status, startedAt) index on SQLite (EXPLAIN QUERY PLAN)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'rix-'));
  const state = new SqliteState({ alias: 'jr', file: join(dir, 'j.db'), table: 'journal' });
  after(async () => {
    await state.close();
    await rm(dir, { recursive: true, force: true });
  });
  await state.init();
  const db = (state as unknown as { db: { exec(sql: string): void; prepare(sql: string): SqlStatement } }).db;
  db.exec(
    `WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 20000)` +
      ` INSERT INTO journal (id, version, data, created_at, updated_at) SELECT printf('run-%08x', n), 2, json_object('status', ${ROWS(`'INDEX'`).replaceAll('g %', 'n %')},` +
      ` 'sagaId', CASE WHEN n % 2 = 0 THEN 'a' ELSE 'b' END, 'runId', 'r' || n, 'requestId', 'r' || n,` +
      ` 'runner', 'api', 'startedAt', 1000 + n, 'updatedAt', 1000 + n), 0, 0 FROM g`,
  );
  db.exec('ANALYZE');
  const admin = new JournalRunAdmin(settings, [state]);
  await admin.list({ limit: 1 });
  const sent: { sql: string; params: unknown[] }[] = [];
  const s = state as unknown as { stmt(sql: string): SqlStatement };
  const stmt = s.stmt.bind(state);
  s.stmt = (sql) => {
    const real = stmt(sql);
    return {
      ...real,
      all: (...params: unknown[]) => (sent.push({ sql, params }), real.all(...params)),
    } as SqlStatement;
  };
  const first = await admin.list({ limit: 20 });
  assert.equal(first.runs.length, 20);
  await admin.list({ limit: 20, cursor: first.next!, saga: 'b' });
  await assert.rejects(admin.abort('r-none', 'x', 'x'), { code: 'RUN_NOT_FOUND' });
  s.stmt = stmt;
  assert.equal(sent.length, 4 + 4 + 1);
  for (const q of sent) {
    const plan = db.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).all(...q.params) as { detail: string }[];
    const text = plan.map((p) => p.detail).join(' | ');
    // the page reads the journal through its index (SEARCH, or SCAN ... USING INDEX in order)
    assert.ok(!/SCAN journal( |$)(?!USING)/.test(text), `no table scan: ${text}`);
    assert.ok(/USING (COVERING )?INDEX "?journal_ix_/.test(text), `through a journal index: ${text}`);
    assert.ok(!/TEMP B-TREE/.test(text), `in index order, no sort: ${text}`);
  }
});
