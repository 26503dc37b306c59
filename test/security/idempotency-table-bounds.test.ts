import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { MemoryState } from '../../src/states/memory.js';
import { SqliteState } from '../../src/states/sqlite.js';
import type { State } from '../../src/states/state.js';
import { idempotencyBoundsSuite } from './idempotency-bounds-suite.js';

/** Issue 9, item 6 on the memory and sqlite states (postgres: the .int.test.ts beside this one). */

const dir = mkdtempSync(join(tmpdir(), 'sagaway-idem-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const unique = (): string => `t_${randomUUID().replaceAll('-', '').slice(0, 12)}`;

idempotencyBoundsSuite(
  'memory',
  {
    shared: false,
    async open(table, idempotency) {
      const s = new MemoryState({ alias: table, ...(idempotency ? { idempotency } : {}) });
      await s.init();
      return s;
    },
    // the memory state has no SQL: its key map, as it is held
    async keyRows(state) {
      const idem = (state as unknown as { idem: Map<string, object> }).idem;
      return [...idem].map(([key, entry]) => ({ key, ...entry }));
    },
  },
  unique,
);

const file = join(dir, 'idem.db');
const sqliteOpen = async (table: string, idempotency?: object): Promise<State> => {
  const s = new SqliteState({
    alias: table,
    file,
    table,
    queries: { keys: { sql: `SELECT * FROM "${table}_idem"` } },
    ...(idempotency ? { idempotency } : {}),
  });
  await s.init();
  return s;
};

idempotencyBoundsSuite(
  'sqlite',
  { shared: true, open: sqliteOpen, keyRows: async (state) => (await state.query('keys', {})).list },
  unique,
);

test('sqlite: a key table of 0.1 (full results) is rewritten to the small form, and its keys still apply once', async () => {
  const table = unique();
  // build the 0.1 layout through a state's own named queries
  const setup = new SqliteState({
    alias: 'setup',
    file,
    table,
    queries: {
      drop: { sql: `DROP TABLE "${table}_idem"` },
      legacy: {
        sql: `CREATE TABLE "${table}_idem" (key TEXT PRIMARY KEY NOT NULL, result TEXT NOT NULL, created_at INTEGER NOT NULL)`,
      },
      index: { sql: `CREATE INDEX "${table}_idem_at" ON "${table}_idem" (created_at)` },
      old: { sql: `INSERT INTO "${table}_idem" VALUES ('run0:create', :result, :at)` },
    },
  });
  await setup.init();
  const created = await setup.create('a', { blob: 'y'.repeat(100_000) });
  for (const q of ['drop', 'legacy', 'index']) await setup.query(q, {});
  await setup.query('old', { result: JSON.stringify(created), at: Date.now() });
  await setup.close();

  const s = await sqliteOpen(table);
  try {
    const rows = (await s.query('keys', {})).list as Record<string, unknown>[];
    assert.equal(rows.length, 1);
    assert.deepEqual(Object.keys(rows[0]!).sort(), ['created_at', 'hash', 'key', 'record_id', 'version']);
    assert.ok(JSON.stringify(rows).length < 200);
    // the redelivery of the old key creates nothing and reports that write
    assert.deepEqual(await s.create('b', { x: 1 }, { idempotencyKey: 'run0:create' }), {
      id: 'a',
      version: 1,
      data: {},
    });
    assert.equal(await s.get('b'), undefined);
    assert.deepEqual(await s.get('a'), created);
  } finally {
    await s.close();
  }
});
