import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { runStateContract } from './contract.js';
import { createState } from '../../src/states/index.js';
import { PostgresState } from '../../src/states/postgres.js';
import { silentLogger } from '../../src/core/logger.js';
import { pgUnavailableReason, skipOrFail } from './pg-available.js';

const URL = process.env['SAGAWAY_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const reason = await pgUnavailableReason(URL);

async function drop(table: string): Promise<void> {
  const c = new pg.Client({ connectionString: URL });
  await c.connect();
  try {
    await c.query(`drop table if exists "${table}", "${table}_idem"`);
  } finally {
    await c.end();
  }
}

if (reason !== undefined) {
  test('postgres state contract', { skip: skipOrFail(reason) }, () => undefined);
} else {
  runStateContract(
    'postgres',
    async (table, options) => {
      const s = new PostgresState({
        ...options,
        alias: table,
        url: URL,
        table,
        poolSize: 4,
        queries: { byOwner: { sql: `select id, data from ${table} where data->>'owner' = :owner` } },
      });
      await s.init();
      return s;
    },
    { drop },
  );

  test('postgres: casts and string literals in a named query; a wrong-typed value is VALIDATION_FAILED', async () => {
    const table = `q_${process.pid}_${Date.now()}`;
    const s = new PostgresState({
      alias: 'q',
      url: URL,
      table,
      queries: {
        typed: { sql: `select ':n'::text as lit, :n::int + 1 as n, :n::text as again` },
        setRank: { sql: `update ${table} set data = data || jsonb_build_object('rank', :rank::int) where id = :id` },
      },
    });
    await s.init();
    try {
      assert.deepEqual((await s.query('typed', { n: 41 })).list, [{ lit: ':n', n: 42, again: '41' }]);
      await assert.rejects(s.query('typed', { n: '1; drop table x' }), { code: 'VALIDATION_FAILED' });
      await s.create('a', { t: 1 });
      await s.query('setRank', { id: 'a', rank: 3 });
      assert.deepEqual((await s.get('a'))?.data, { t: 1, rank: 3 });
    } finally {
      await s.close();
      await drop(table);
    }
  });

  test('postgres: a value jsonb cannot hold is VALIDATION_FAILED; a slow statement is STATE_UNAVAILABLE', async () => {
    const table = `nul_${process.pid}_${Date.now()}`;
    const s = new PostgresState({
      alias: 'n',
      url: URL,
      table,
      statementTimeoutMs: 200,
      queries: { slow: { sql: 'select pg_sleep(:s::float)' } },
    });
    await s.init();
    try {
      await assert.rejects(s.create('a', { text: 'nul \u0000 here' }), { code: 'VALIDATION_FAILED', http: 400 });
      assert.equal(await s.get('a'), undefined);
      await assert.rejects(s.query('slow', { s: 2 }), { code: 'STATE_UNAVAILABLE', http: 503 });
      assert.equal((await s.create('b', { ok: 1 })).version, 1);
    } finally {
      await s.close();
      await drop(table);
    }
  });

  test('postgres: several processes creating the same table at once all start', async () => {
    const table = `race_${process.pid}_${Date.now()}`;
    const states = Array.from({ length: 6 }, () => new PostgresState({ alias: 'r', url: URL, table, poolSize: 1 }));
    try {
      await Promise.all(states.map((s) => s.init()));
      await states[0]?.create('a', {});
      assert.equal((await states[5]?.get('a'))?.version, 1);
    } finally {
      for (const s of states) await s.close();
      await drop(table);
    }
  });

  test('postgres: createState seeds an empty table once from a file', async () => {
    const { mkdtemp, writeFile, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = await mkdtemp(join(tmpdir(), 'sagaway-seed-'));
    const seed = join(dir, 'seed.json');
    await writeFile(seed, JSON.stringify([{ id: 'approve', data: { action: 'Update', version: 0 } }]));
    const table = `seed_${process.pid}_${Date.now()}`;
    const settings = { type: 'postgres' as const, alias: 'actions', url: URL, table, poolSize: 2, queries: {}, seed };
    try {
      const a = createState(settings, silentLogger());
      await a.init();
      assert.deepEqual(await a.get('approve'), { id: 'approve', version: 1, data: { action: 'Update', version: 0 } });
      await a.update('approve', { version: 2 });
      await a.close();
      const b = createState(settings, silentLogger());
      await b.init();
      // not re-seeded: the edit made at run time survives
      assert.equal((await b.get('approve'))?.version, 2);
      await b.close();
    } finally {
      await drop(table);
      await rm(dir, { recursive: true, force: true });
    }
  });
}
