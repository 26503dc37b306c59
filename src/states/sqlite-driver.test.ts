import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openSqlite, sqliteDriverName } from './sqlite-driver.js';

/** What the SQLite state relies on, the same on both drivers (whichever this runtime picks). */

test(`sqlite driver (${await sqliteDriverName()}): iterate gives plain rows, big integers as numbers, nothing for writes`, async () => {
  const db = await openSqlite(':memory:');
  assert.equal(db.driver, await sqliteDriverName());
  db.exec('CREATE TABLE t (id TEXT, n INTEGER)');
  const rows = [...db.prepare('SELECT 9007199254740993 AS big, ? AS s').iterate('x')];
  assert.equal(rows.length, 1);
  const row = rows[0] as Record<string, unknown>;
  assert.equal(Object.getPrototypeOf(row), Object.prototype);
  assert.deepEqual(Object.keys(row), ['big', 's']);
  assert.equal(row['big'], 9007199254740992);
  assert.equal(row['s'], 'x');
  // a statement without rows runs once and yields nothing
  assert.deepEqual([...db.prepare('INSERT INTO t VALUES (?, ?)').iterate('a', 1)], []);
  assert.deepEqual(db.prepare('SELECT id, n FROM t').all().length, 1);
  // the cached statement's own reads stay on plain numbers after an iteration
  assert.equal(typeof (db.prepare('SELECT n FROM t').get() as { n: unknown }).n, 'number');
  db.close();
});

test('sqlite driver: immediate commits on return and rolls back on throw, and can run again', async () => {
  const db = await openSqlite(':memory:');
  db.exec('CREATE TABLE t (id TEXT PRIMARY KEY)');
  const ins = db.prepare('INSERT INTO t VALUES (?)');
  const write = db.immediate((ids: string[], fail: boolean) => {
    for (const id of ids) ins.run(id);
    if (fail) throw new Error('boom');
    return ids.length;
  });
  assert.equal(write(['a', 'b'], false), 2);
  assert.throws(() => write(['c', 'd'], true), /boom/);
  // a constraint error inside the transaction rolls back what came before it
  assert.throws(() => write(['e', 'a'], false));
  assert.equal(write(['f'], false), 1);
  assert.deepEqual(
    db
      .prepare('SELECT id FROM t ORDER BY id')
      .all()
      .map((r) => (r as { id: string }).id),
    ['a', 'b', 'f'],
  );
  db.close();
});
