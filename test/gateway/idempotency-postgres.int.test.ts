import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import type { StateSettings } from '../../src/config/settings.js';
import { silentLogger } from '../../src/core/logger.js';
import { createGateway, type Gateway } from '../../src/gateway/server.js';
import { postgresKeyStore } from '../../src/states/request-keys/postgres.js';
import { pgUnavailableReason, skipOrFail } from '../states/pg-available.js';
import { runRequestKeyContract } from '../states/request-keys-contract.js';
import { ok, ScriptedService } from './harness.js';
import { KEY_A, KEY_B, post, settings } from './idempotency-harness.js';

/**
 * Idempotency-Key requests with the PostgreSQL store, on the real server: the store contract,
 * and two gateway replicas sharing one state (one table of a name unique to this run).
 */

const URL = process.env['SAGAWAY_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const reason = await pgUnavailableReason(URL);
let n = 0;
const unique = () => `ik_${process.pid}_${Date.now().toString(36)}_${++n}`;
const tables: string[] = [];

async function dropAll(): Promise<void> {
  const c = new pg.Client({ connectionString: URL });
  await c.connect();
  try {
    for (const t of tables) await c.query(`drop table if exists "${t}"`);
  } finally {
    await c.end();
  }
}

if (reason !== undefined) {
  test('idempotency keys on postgres', { skip: skipOrFail(reason) }, () => undefined);
} else {
  test.after(dropAll);

  runRequestKeyContract('postgres', async () => {
    const table = `${unique()}_reqkeys`;
    tables.push(table);
    const s = postgresKeyStore('keys', URL, table, 4, () => undefined);
    await s.init();
    return s;
  });

  test('a table made before the scope column gets it; its old rows still replay and count for nobody', async () => {
    const table = `${unique()}_reqkeys`;
    tables.push(table);
    const c = new pg.Client({ connectionString: URL });
    await c.connect();
    try {
      await c.query(
        `CREATE TABLE "${table}" (id TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, owner TEXT NOT NULL, ` +
          `done INTEGER NOT NULL DEFAULT 0, status INTEGER, headers TEXT, body BYTEA, ` +
          `omitted INTEGER NOT NULL DEFAULT 0, expires_at BIGINT NOT NULL)`,
      );
      await c.query(`INSERT INTO "${table}" VALUES ('k', 'fp', 'o', 1, 201, '{}', '\\x7b7d', 0, 9000000000000000)`);
    } finally {
      await c.end();
    }
    const s = postgresKeyStore('keys', URL, table, 2, () => undefined);
    try {
      await s.init();
      assert.equal((await s.claim('k', 'fp', 1, 1001, { scope: 'a', max: 1 })).kind, 'done');
      assert.equal((await s.claim('n', 'fp', 1, 1001, { scope: 'a', max: 1 })).kind, 'claimed');
      assert.equal((await s.claim('m', 'fp', 1, 1001, { scope: 'a', max: 1 })).kind, 'exhausted');
    } finally {
      await s.close();
    }
  });

  test('two gateway replicas on one postgres state: in use, replay and scopes hold across them', async () => {
    const table = unique();
    tables.push(`${table}_reqkeys`);
    const state: StateSettings = { type: 'postgres', alias: 'keys', url: URL, table, poolSize: 4, queries: {} };
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const service = new ScriptedService(async (_req, _r, i) => {
      if (i === 1) await gate;
      return ok({ order: `o${i}` }, 201);
    });
    const s = settings({ state: 'keys' }, { keys: state });
    const gateways: Gateway[] = [];
    try {
      for (let i = 0; i < 2; i++) gateways.push(await createGateway({ settings: s, service, log: silentLogger() }));
      const [a, b] = gateways as [Gateway, Gateway];
      const first = post(a, 'pg-key', { sku: 'A' });
      while (service.calls.length === 0) await new Promise((r) => setTimeout(r, 5));
      // the other replica sees the key taken
      const busy = await post(b, 'pg-key', { sku: 'A' });
      assert.equal(busy.statusCode, 409);
      assert.equal(JSON.parse(busy.body).code, 'IDEMPOTENCY_KEY_IN_USE');
      release();
      assert.equal((await first).statusCode, 201);
      const replay = await post(b, 'pg-key', { sku: 'A' });
      assert.equal(replay.statusCode, 201);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(JSON.parse(replay.body).order, 'o1');
      assert.equal((await post(b, 'pg-key', { sku: 'B' })).statusCode, 422);
      // bob's key of the same name is his own
      const bob = await post(b, 'pg-key', { sku: 'B' }, KEY_B);
      assert.equal(bob.statusCode, 201);
      assert.equal(JSON.parse(bob.body).order, 'o2');
      assert.equal(service.calls.length, 2);
      // the rows hold hashes only: neither the key nor the caller appears in the table
      const c = new pg.Client({ connectionString: URL });
      await c.connect();
      try {
        const rows = (await c.query(`select id, fingerprint from "${table}_reqkeys"`)).rows;
        assert.equal(rows.length, 2);
        const text = JSON.stringify(rows);
        for (const secret of ['pg-key', 'alice', 'bob', KEY_A]) assert.equal(text.includes(secret), false, secret);
      } finally {
        await c.end();
      }
    } finally {
      for (const g of gateways) await g.close();
    }
  });
}
