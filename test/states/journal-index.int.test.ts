import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import pg from 'pg';
import { silentLogger } from '../../src/core/logger.js';
import { Journal } from '../../src/runner/orchestrator/journal.js';
import { PostgresState } from '../../src/states/postgres.js';
import { pgUnavailableReason, skipOrFail } from './pg-available.js';

/**
 * The journal's orphan scan and its pruning read through an index on the real PostgreSQL, not
 * the whole table: the statements they send are captured and explained on a journal of 20,000
 * finished runs and a few running ones.
 */

const URL = process.env['SAGAWAY_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const reason = await pgUnavailableReason(URL);
const table = `jix_${process.pid}_${Date.now().toString(36)}`;

interface Plan {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: Plan[];
}
const nodes = (p: Plan): Plan[] => [p, ...(p.Plans ?? []).flatMap(nodes)];

test(
  'journal: the orphan scan and pruning use the index (EXPLAIN), not a table scan',
  {
    skip: reason ? skipOrFail(reason) : false,
  },
  async () => {
    const client = new pg.Client({ connectionString: URL });
    await client.connect();
    const state = new PostgresState({ alias: 'jr', url: URL, table, poolSize: 2 });
    after(async () => {
      await state.close();
      await client.query(`drop table if exists "${table}", "${table}_idem"`);
      await client.end();
    });
    await state.init();
    // 20,000 finished runs of this runner and deployment, then some running ones
    await client.query(
      `INSERT INTO "${table}" (id, version, data) SELECT 'run-' || g, 2, jsonb_build_object('status', 'DONE',` +
        ` 'runner', 'api', 'deployment', '1', 'owner', 'gone', 'startedAt', 1, 'updatedAt', 1000 + g, 'payload', null)` +
        ` FROM generate_series(1, 20000) g`,
    );
    const j = new Journal(state, 'api', '1', 'me', silentLogger());
    const ctx = (id: string) => ({ request: { method: 'GET', path: '/x', id, query: {} }, user: null });
    for (let i = 0; i < 5; i++) await j.begin('s', `r${i}`, {}, ctx(`q${i}`), 'anon:x');
    await client.query(`ANALYZE "${table}"`);

    const sent: { sql: string; params: unknown[] }[] = [];
    const s = state as unknown as { run(sql: string, params?: unknown[]): Promise<unknown> };
    const run = s.run.bind(state);
    s.run = (sql, params) => {
      sent.push({ sql, params: params ?? [] });
      return run(sql, params);
    };
    const claimed = await j.claimOrphans((instance) => instance === 'me');
    assert.equal(claimed.length, 0, 'all five are owned by a live process');
    const pruned = await j.prune(1000, 1_000_000);
    s.run = run;

    const lists = sent.filter((q) => q.sql.startsWith('SELECT') && q.sql.includes(' LIMIT '));
    assert.equal(
      lists.length,
      1 + 10 + 1,
      'one orphan scan page; ten pruning pages of finished runs, one of index entries',
    );
    for (const q of lists) {
      const r = await client.query<{ 'QUERY PLAN': [{ Plan: Plan }] }>(`EXPLAIN (FORMAT JSON) ${q.sql}`, q.params);
      const plan = nodes(r.rows[0]!['QUERY PLAN'][0].Plan);
      const onTable = plan.filter((n) => n['Relation Name'] === table);
      assert.ok(onTable.length > 0, JSON.stringify(plan));
      // the page through the journal index; a list page then fetches the data of the rows within
      // its budget by primary key (states/sql-list.ts), which is an index too
      const names = JSON.stringify(onTable.map((n) => [n['Node Type'], n['Index Name']]));
      assert.ok(
        onTable.every(
          (n) =>
            n['Node Type'].includes('Index') &&
            (n['Index Name']?.startsWith(`${table}_ix_`) || n['Index Name'] === `${table}_pkey`),
        ),
        `read through the journal index: ${names}`,
      );
      assert.ok(
        onTable.some((n) => n['Index Name']?.startsWith(`${table}_ix_`)),
        `read through the journal index: ${names}`,
      );
    }
    // and pruning did its work through it: the 1,000 oldest finished runs (ten pages) at most
    const left = await client.query<{ n: number }>(
      `select count(*)::int as n from "${table}" where data->>'status' = 'DONE'`,
    );
    assert.equal(pruned, 1000);
    assert.equal(left.rows[0]!.n, 20000 - 1000);
  },
);
