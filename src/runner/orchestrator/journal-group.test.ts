import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { silentLogger } from '../../core/logger.js';
import { GroupCommitState, groupCommit } from '../../states/group-commit.js';
import { createState } from '../../states/index.js';
import { Journal } from './journal.js';

const dir = await mkdtemp(join(tmpdir(), 'sagaway-jgc-'));
after(() => rm(dir, { recursive: true, force: true }));

test('group commit: a configured SQLite journal (createState) batches the writes of concurrent runs', async () => {
  const state = createState(
    { type: 'sqlite', alias: 'jr', file: join(dir, 'journal.db'), table: 'journal', queries: {} },
    silentLogger(),
  );
  await state.init();
  const g = groupCommit(state) as GroupCommitState;
  assert.ok(g instanceof GroupCommitState, 'a configured SQL state is group-committed');
  const j = new Journal(state, 'api', '1', 'me', silentLogger());
  const ctx = (id: string) => ({ request: { method: 'GET', path: '/x', id, query: {} }, user: null });
  const entries = await Promise.all(
    Array.from({ length: 50 }, (_, i) => j.begin('saga', `r${i}`, {}, ctx(`q${i}`), 'anon:x')),
  );
  await Promise.all(entries.map((e) => j.finish(e, { outcome: 'SUCCESS', http: 200 })));
  assert.equal(g.stats.writes, 100);
  assert.ok(g.stats.batches <= 4, `100 journal writes in ${g.stats.batches} transactions`);
  assert.equal((await state.get(entries[7]!.id))?.data['status'], 'DONE');
  await g.close();
});

test('the start record: started() before the first event, else with the first journal write or the outcome', async () => {
  const state = createState(
    { type: 'sqlite', alias: 'jr2', file: join(dir, 'start.db'), table: 'journal', queries: {} },
    silentLogger(),
  );
  await state.init();
  const g = groupCommit(state) as GroupCommitState;
  const j = new Journal(state, 'api', '1', 'me', silentLogger());
  const ctx = (id: string) => ({ request: { method: 'GET', path: '/x', id, query: {} }, user: null });
  try {
    // a short run: one write in all, the record created finished
    const quick = j.open('saga', 'r1', { a: 1 }, ctx('quick'), 'anon:x', 'mine');
    assert.equal(await state.get(quick.id), undefined, 'nothing written before the first step');
    await j.settle(quick, { outcome: 'SUCCESS', http: 200, response: { ok: true } });
    const rec = await state.get(quick.id);
    assert.equal(rec?.version, 1, 'one write');
    assert.equal(rec?.data['status'], 'DONE');
    assert.deepEqual(rec?.data['input'], { a: 1 });
    assert.equal(g.stats.writes, 2, 'the run and its correlation entry');

    // a run with an event step before the end: the start record goes with that step's record
    const two = j.open('saga', 'r2', {}, ctx('two'), 'anon:x');
    await j.stepper(two)('next', { parameters: {}, out: 1 }, { ...ctx('two'), status: 'SUCCESS' });
    assert.equal((await state.get(two.id))?.data['next'], 'next');
    assert.equal((await state.get(two.id))?.version, 1);
    await j.settle(two, { outcome: 'SUCCESS', http: 200 });
    assert.equal((await state.get(two.id))?.version, 2);

    // a run with an event step: started() writes the record, RUNNING, before the event is sent
    const slow = j.open('saga', 'r3', {}, ctx('slow'), 'anon:x');
    assert.equal(await state.get(slow.id), undefined, 'nothing written before started()');
    await j.started(slow);
    assert.equal((await state.get(slow.id))?.data['status'], 'RUNNING', 'resumable while its first step runs');
    await j.stepper(slow)('next', { parameters: {} }, { ...ctx('slow'), status: 'SUCCESS' });
    await j.settle(slow, { outcome: 'SUCCESS', http: 200 });
    assert.equal((await state.get(slow.id))?.data['status'], 'DONE');
    assert.equal((await state.get(slow.id))?.version, 3, 'start, step, outcome');

    // started(): the record exists afterwards, for a write that updates it by version
    const other = j.open('saga', 'r5', {}, ctx('other'), 'anon:x');
    await j.started(other);
    assert.equal((await state.update(other.id, { extra: 1 }, { expectedVersion: other.version })).version, 2);

    // the store down when the run ends: settle says so (the runner answers 503), and retries
    const lost = j.open('saga', 'r4', {}, ctx('lost'), 'anon:x');
    await state.close();
    assert.equal(await j.settle(lost, { outcome: 'SUCCESS', http: 200 }), 'retrying');
    assert.equal(j.outcomesRetrying, 1);
  } finally {
    await state.close();
  }
});
