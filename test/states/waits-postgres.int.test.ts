import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { PostgresState } from '../../src/states/postgres.js';
import { createWaitStore } from '../../src/states/waits/open.js';
import type { ParkRow } from '../../src/states/waits/store.js';
import { pgUnavailableReason, skipOrFail } from './pg-available.js';

/**
 * The wait store on the real PostgreSQL (issue 21): the batched statements (pg-batch.ts) keep
 * the guard of their single forms when concurrent callers share one statement, and the claim
 * reads the journal: it takes no wait whose run's record is RUNNING (parks take no lease here).
 */

const URL = process.env['SAGAWAY_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const reason = await pgUnavailableReason(URL);
const TABLE = `waitpg${process.pid}`;

function row(n: number, over: Partial<ParkRow> = {}): ParkRow {
  return {
    waitId: `w${n}-${Math.random().toString(36).slice(2)}`,
    journalId: `j${n}`,
    runId: `r${n}`,
    runner: 'api',
    deployment: 'd1',
    sagaId: 's',
    step: 'pause',
    visit: 1,
    kind: 'signal',
    signal: 'go',
    key: null,
    dueAt: Date.now() + 3600_000,
    caller: null,
    createdAt: Date.now(),
    ...over,
  };
}

if (reason !== undefined) {
  test('wait store on postgres', { skip: skipOrFail(reason) }, () => undefined);
} else {
  let journal: PostgresState;
  let store: ReturnType<typeof createWaitStore>;
  before(async () => {
    journal = new PostgresState({ alias: 'jr', url: URL, table: TABLE, poolSize: 2 });
    await journal.init();
    store = createWaitStore({ type: 'postgres', alias: 'jr', url: URL, table: TABLE, poolSize: 4, queries: {} });
    await store.init();
  });
  after(async () => {
    await store.close();
    await journal.close();
    const c = new pg.Client({ connectionString: URL });
    await c.connect();
    await c.query(`drop table if exists "${TABLE}", "${TABLE}_idem", "${TABLE}_waits", "${TABLE}_signals"`);
    await c.end();
  });

  test('parks of one turn share a statement, each answered with its own row; a wait parked again keeps its id', async () => {
    const rows = [row(1), row(2), row(3)];
    const parked = await Promise.all(rows.map((r) => store.park(r, 'me', 0)));
    assert.deepEqual(
      parked.map((p) => p.waitId),
      rows.map((r) => r.waitId),
    );
    assert.ok(parked.every((p) => p.version === 1 && p.resolution === null));
    const again = await store.park(row(2), 'me', 0); // same journal record, step and visit
    assert.equal(again.waitId, rows[1]?.waitId);
    assert.equal(again.version, 2);
  });

  test('look-ups by run in one turn answer each run, and nothing for an unknown one', async () => {
    const [a, b, none] = await Promise.all([store.byRun('r1'), store.byRun('r3'), store.byRun('nope')]);
    assert.equal(a?.journalId, 'j1');
    assert.equal(b?.journalId, 'j3');
    assert.equal(none, undefined);
  });

  test('two resolutions of one wait at one version in the same turn: exactly one applies', async () => {
    const w = await store.byRun('r1');
    assert.ok(w);
    const now = Date.now();
    const results = await Promise.all([
      store.resolve(w.waitId, w.version, { value: 'SIGNAL', data: 1 }, [], now),
      store.resolve(w.waitId, w.version, { value: 'SIGNAL', data: 2 }, [], now),
      store.resolve(w.waitId, w.version, { value: 'CANCELLED' }, [], now),
    ]);
    assert.equal(results.filter(Boolean).length, 1);
    const after1 = await store.byRun('r1');
    assert.equal(after1?.version, w.version + 1);
  });

  test('the claim leaves a wait whose run is RUNNING, takes it once WAITING with its journal record', async () => {
    const w = await store.byRun('r1'); // resolved above: ready now
    assert.ok(w?.resolution);
    await journal.create('j1', { status: 'RUNNING', runId: 'r1' });
    const claim = () => store.claimReady('api', 'd1', Date.now(), 'poller', Date.now() + 30_000, 10);
    assert.deepEqual(await claim(), [], 'not while the run is being parked');
    await journal.update('j1', { status: 'WAITING' });
    const taken = await claim();
    assert.equal(taken.length, 1);
    assert.equal(taken[0]?.waitId, w.waitId);
    assert.equal(taken[0]?.journal?.version, 2);
    assert.equal(taken[0]?.journal?.data['status'], 'WAITING');
    assert.deepEqual(await claim(), [], 'leased: taken once');
  });

  test('a ready wait whose run has no journal record is claimed with journal null; removals in one turn', async () => {
    const w2 = await store.byRun('r2');
    const w3 = await store.byRun('r3');
    assert.ok(w2 && w3);
    const now = Date.now();
    assert.ok(await store.resolve(w2.waitId, w2.version, { value: 'TIMEOUT' }, [], now));
    const [taken] = await store.claimReady('api', 'd1', now, 'poller', now + 30_000, 10);
    assert.equal(taken?.waitId, w2.waitId);
    assert.equal(taken?.journal, null);
    await Promise.all([store.remove(w2.waitId), store.remove(w3.waitId)]);
    assert.equal(await store.byRun('r2'), undefined);
    assert.equal(await store.byRun('r3'), undefined);
    assert.notEqual(await store.byRun('r1'), undefined);
  });

  test('the next ready time is the earliest after now', async () => {
    const at = Date.now() + 5000;
    await store.park(row(9, { kind: 'timer', signal: null, dueAt: at }), 'me', 0);
    assert.equal(await store.nextReady('api', 'd1', Date.now()), at);
    assert.equal(await store.nextReady('api', 'other', Date.now()), undefined);
  });
}
