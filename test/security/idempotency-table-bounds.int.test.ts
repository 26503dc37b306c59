import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import pg from 'pg';
import { PostgresState } from '../../src/states/postgres.js';
import type { State } from '../../src/states/state.js';
import { pgUnavailableReason, skipOrFail } from '../states/pg-available.js';
import { idempotencyBoundsSuite } from './idempotency-bounds-suite.js';

/** Issue 9, item 6 on the postgres state (memory and sqlite: the .test.ts beside this one). */

const URL = process.env['SAGAWAY_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const reason = await pgUnavailableReason(URL);
const tables: string[] = [];
let counter = 0;
const unique = (): string => {
  const t = `idb_${process.pid}_${Date.now().toString(36)}_${counter++}`;
  tables.push(t);
  return t;
};

async function sql(text: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const c = new pg.Client({ connectionString: URL });
  await c.connect();
  try {
    return await c.query(text, params);
  } finally {
    await c.end();
  }
}

const open = async (table: string, idempotency?: object): Promise<State> => {
  const s = new PostgresState({
    alias: table,
    url: URL,
    table,
    poolSize: 2,
    queries: {
      keys: { sql: `SELECT * FROM "${table}_idem" ORDER BY n` },
      touch: { sql: `UPDATE "${table}" SET data = data || '{"touched":true}' WHERE id = :id` },
    },
    ...(idempotency ? { idempotency } : {}),
  });
  await s.init();
  return s;
};

if (reason !== undefined) {
  test('postgres idempotency table bounds', { skip: skipOrFail(reason) }, () => undefined);
} else {
  after(async () => {
    for (const t of tables) await sql(`DROP TABLE IF EXISTS "${t}", "${t}_idem"`);
  });

  idempotencyBoundsSuite(
    'postgres',
    { shared: true, open, keyRows: async (state) => (await state.query('keys', {})).list },
    unique,
  );

  test('postgres: data changed behind the version (a named query) is detected by the hash', async () => {
    const table = unique();
    const s = await open(table);
    try {
      const first = await s.update((await s.create('a', { n: 1 })).id, { n: 2 }, { idempotencyKey: 'run:u' });
      assert.deepEqual(await s.update('a', { n: 3 }, { idempotencyKey: 'run:u' }), first);
      await s.query('touch', { id: 'a' }); // same version, other data
      assert.deepEqual(await s.update('a', { n: 3 }, { idempotencyKey: 'run:u' }), { id: 'a', version: 2, data: {} });
      assert.deepEqual(await s.get('a'), { id: 'a', version: 2, data: { n: 2, touched: true } });
    } finally {
      await s.close();
    }
  });

  test('postgres: a key table of 0.1 (full results) is rewritten to the small form, and its keys still apply once', async () => {
    const table = unique();
    const setup = await open(table);
    const created = await setup.create('a', { blob: 'y'.repeat(100_000) });
    await setup.close();
    await sql(`DROP TABLE "${table}_idem"`);
    await sql(
      `CREATE TABLE "${table}_idem" (key TEXT PRIMARY KEY, result JSONB, created_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
    );
    await sql(`CREATE INDEX "${table}_idem_at" ON "${table}_idem" (created_at)`);
    await sql(`INSERT INTO "${table}_idem" (key, result) VALUES ('run0:create', $1::jsonb)`, [JSON.stringify(created)]);
    // two processes start at once: one migrates, the other waits and finds nothing to do
    const [s, s2] = await Promise.all([open(table), open(table)]);
    try {
      const rows = (await s.query('keys', {})).list as Record<string, unknown>[];
      assert.equal(rows.length, 1);
      assert.deepEqual(Object.keys(rows[0]!).sort(), ['created_at', 'hash', 'key', 'n', 'record_id', 'version']);
      assert.deepEqual(await s.create('b', { x: 1 }, { idempotencyKey: 'run0:create' }), {
        id: 'a',
        version: 1,
        data: {},
      });
      assert.equal(await s2.get('b'), undefined);
      assert.deepEqual(await s2.get('a'), created);
      const idx = await sql(`SELECT indexname FROM pg_indexes WHERE tablename = $1 ORDER BY indexname`, [
        `${table}_idem`,
      ]);
      assert.deepEqual(
        idx.rows.map((r) => r.indexname),
        [`${table}_idem_n`, `${table}_idem_pkey`],
      );
    } finally {
      await s.close();
      await s2.close();
    }
  });
}
