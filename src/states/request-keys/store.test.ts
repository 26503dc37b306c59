import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runRequestKeyContract } from '../../../test/states/request-keys-contract.js';
import { MemoryKeyStore } from './memory.js';
import { sqliteKeyStore } from './sqlite.js';

const dir = mkdtempSync(join(tmpdir(), 'sagaway-reqkeys-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

runRequestKeyContract('memory', async () => new MemoryKeyStore());
runRequestKeyContract('sqlite', async () => {
  const s = sqliteKeyStore(join(dir, `keys-${++n}.db`), 'todos_reqkeys', () => undefined);
  await s.init();
  return s;
});

test('memory request keys: bounded by rows and by bytes, the rows that expire first going first', async () => {
  const s = new MemoryKeyStore({ maxKeys: 3, maxBytes: 10 });
  for (const id of ['a', 'b', 'c', 'd']) await s.claim(id, 'fp', 0, 1000);
  assert.equal(s.size, 3);
  assert.equal((await s.claim('a', 'fp', 1, 1001)).kind, 'claimed', 'a was dropped: claimed anew');
  const d = await s.claim('d', 'fp', 1, 1001);
  assert.deepEqual(d, { kind: 'running' });
  // storing 8 bytes twice is over 10 bytes: the older stored row goes
  const e = await s.claim('e', 'fp', 2, 1002);
  const f = await s.claim('f', 'fp', 2, 1002);
  const body = Buffer.alloc(8);
  await s.complete('e', e.kind === 'claimed' ? e.owner : '', { status: 200, headers: {}, body, omitted: false }, 50);
  await s.complete('f', f.kind === 'claimed' ? f.owner : '', { status: 200, headers: {}, body, omitted: false }, 60);
  assert.equal((await s.claim('f', 'fp', 3, 1003)).kind, 'done');
  assert.equal((await s.claim('e', 'fp', 3, 1003)).kind, 'claimed');
});

test('memory request keys: expired rows are removed, not only ignored', async () => {
  const s = new MemoryKeyStore();
  for (let i = 0; i < 50; i++) await s.claim(`k${i}`, 'fp', 0, 100);
  assert.equal(s.size, 50);
  await s.claim('later', 'fp', 100, 200);
  assert.equal(s.size, 1);
});

test('memory request keys: over the bound, stored responses go before a claim whose request is still running', async () => {
  const s = new MemoryKeyStore({ maxKeys: 3 });
  const stored = { status: 200, headers: {}, body: Buffer.alloc(1), omitted: false };
  // A victim's request is running under key v; another client then fills the store with its keys.
  assert.equal((await s.claim('v', 'fp', 0, 1000)).kind, 'claimed');
  for (const id of ['x1', 'x2', 'x3', 'x4']) {
    const c = await s.claim(id, 'fp', 1, 1001);
    await s.complete(id, c.kind === 'claimed' ? c.owner : '', stored, 5000);
  }
  assert.equal(s.size, 3);
  assert.deepEqual(await s.claim('v', 'fp', 2, 1002), { kind: 'running' }, 'the running claim is kept: no second run');
  assert.equal((await s.claim('x1', 'fp', 2, 1002)).kind, 'claimed', 'the oldest stored response went instead');
});

test('sqlite request keys: a table made before the scope column gets it, and its old rows still replay', async () => {
  const file = join(dir, 'old.db');
  const { openSqlite } = await import('../sqlite-driver.js');
  const old = await openSqlite(file);
  // the table as the version before the per-caller quota made it
  old.exec(
    'CREATE TABLE "todos_reqkeys" (id TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, owner TEXT NOT NULL, ' +
      'done INTEGER NOT NULL DEFAULT 0, status INTEGER, headers TEXT, body BLOB, ' +
      'omitted INTEGER NOT NULL DEFAULT 0, expires_at INTEGER NOT NULL)',
  );
  old.exec(`INSERT INTO "todos_reqkeys" VALUES ('k', 'fp', 'o', 1, 201, '{}', x'7b7d', 0, 9000000000000000)`);
  old.close();
  const s = sqliteKeyStore(file, 'todos_reqkeys', () => undefined);
  try {
    await s.init();
    assert.equal((await s.claim('k', 'fp', 1, 1001, { scope: 'a', max: 1 })).kind, 'done');
    assert.equal((await s.claim('n', 'fp', 1, 1001, { scope: 'a', max: 1 })).kind, 'claimed');
    assert.equal((await s.claim('m', 'fp', 1, 1001, { scope: 'a', max: 1 })).kind, 'exhausted');
  } finally {
    await s.close();
  }
});

test("memory request keys: one caller's stored bodies take an eighth of the bytes at most; its own oldest go, not others'", async () => {
  const s = new MemoryKeyStore({ maxBytes: 800 });
  const stored = (n: number) => ({ status: 200, headers: {}, body: Buffer.alloc(n), omitted: false });
  const put = async (id: string, scope: string, n: number) => {
    const c = await s.claim(id, 'fp', 0, 1000, { scope, max: 1000 });
    assert.equal(c.kind, 'claimed');
    await s.complete(id, c.kind === 'claimed' ? c.owner : '', stored(n), 5000);
  };
  await put('victim', 'v', 90);
  for (let i = 0; i < 20; i++) await put(`flood-${i}`, 'f', 40);
  assert.equal((await s.claim('victim', 'fp', 1, 1001)).kind, 'done', "the victim's stored response stays");
  assert.equal((await s.claim('flood-19', 'fp', 1, 1001)).kind, 'done', "the flooder's newest stays");
  assert.equal((await s.claim('flood-0', 'fp', 1, 1001)).kind, 'claimed', "the flooder's oldest went");
  // 100 bytes per scope at most: the flooder keeps its two newest 40-byte bodies
  assert.equal((await s.claim('flood-17', 'fp', 1, 1001)).kind, 'claimed');
  assert.equal((await s.claim('flood-18', 'fp', 1, 1001)).kind, 'done');
});

test('memory request keys: an expired row claimed again gives its bytes back, also behind a live row', async () => {
  const s = new MemoryKeyStore({ maxBytes: 10 });
  const stored = { status: 200, headers: {}, body: Buffer.alloc(8), omitted: false };
  // a live claim first: expiry from the front stops at it, so the expired row behind it waits there
  assert.equal((await s.claim('live', 'fp', 0, 10_000)).kind, 'claimed');
  const a = await s.claim('a', 'fp', 0, 100);
  await s.complete('a', a.kind === 'claimed' ? a.owner : '', stored, 50);
  // past its retention, a is claimed anew and stores 8 bytes again: 8 in the store, not 16
  const again = await s.claim('a', 'fp', 60, 160);
  assert.equal(again.kind, 'claimed');
  await s.complete('a', again.kind === 'claimed' ? again.owner : '', stored, 5000);
  assert.equal((await s.claim('a', 'fp', 70, 170)).kind, 'done', 'within maxBytes: kept');
});
