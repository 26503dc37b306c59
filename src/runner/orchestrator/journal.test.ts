import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SagawayError } from '../../core/errors.js';
import { silentLogger } from '../../core/logger.js';
import { createState } from '../../states/index.js';
import { Journal } from './journal.js';
import { JournalReader } from './journal-reader.js';
import { journalId } from './journal-record.js';

async function memory() {
  const s = createState({ type: 'memory', alias: 'jr', queries: {} }, silentLogger());
  await s.init();
  return s;
}

const ctx = (sub: string | null, id: string) => ({
  request: { method: 'GET', path: '/x', id, query: {} },
  user: sub === null ? null : { sub, roles: [], claims: {}, anonymous: false },
});

test('journal: begin, steps, finish; the status is read by the same caller only', async () => {
  const state = await memory();
  const j = new Journal(state, 'api', '1', 'me', silentLogger());
  const entry = await j.begin('saga', 'run1', { a: 1 }, ctx('alice', 'req-1'), 'jwt:alice');
  const id = entry.id;
  assert.equal(id, journalId('jwt:alice', 'req-1'));
  const reader = new JournalReader([state]);
  assert.equal((await reader.lookup('jwt:alice', 'req-1'))?.status, 'RUNNING');
  await j.stepper(entry)('next', { parameters: { a: 1 }, out: 2 }, { ...ctx('alice', 'req-1'), status: 'SUCCESS' });
  const rec = await state.get(id);
  assert.equal(rec?.data['next'], 'next');
  assert.deepEqual(rec?.data['payload'], { parameters: { a: 1 }, out: 2 });
  await j.finish(entry, { outcome: 'SUCCESS', http: 200, response: { out: 2 } });
  assert.deepEqual(await reader.lookup('jwt:alice', 'req-1'), {
    requestId: 'req-1',
    status: 'DONE',
    outcome: 'SUCCESS',
    http: 200,
    response: { out: 2 },
    startedAt: new Date(rec!.data['startedAt'] as number).toISOString(),
    updatedAt: (await reader.lookup('jwt:alice', 'req-1'))!.updatedAt,
  });
  assert.equal(await reader.lookup('jwt:bob', 'req-1'), undefined);
  assert.equal(await reader.lookup('anon:127.0.0.1', 'req-1'), undefined);
});

test('claimOrphans: only RUNNING runs of this runner and deployment whose owner is gone, each claimed once', async () => {
  const state = await memory();
  const dead = new Journal(state, 'api', '1', 'dead', silentLogger());
  const live = new Journal(state, 'api', '1', 'live', silentLogger());
  const other = new Journal(state, 'api', '2', 'dead', silentLogger());
  const orphan = (await dead.begin('saga', 'r1', {}, ctx('u', 'o1'), 'jwt:u')).id;
  await live.begin('saga', 'r2', {}, ctx('u', 'o2'), 'jwt:u');
  await other.begin('saga', 'r3', {}, ctx('u', 'o3'), 'jwt:u');
  const done = await dead.begin('saga', 'r4', {}, ctx('u', 'o4'), 'jwt:u');
  await dead.finish(done, { outcome: 'SUCCESS', http: 200 });

  const a = new Journal(state, 'api', '1', 'survivor-a', silentLogger());
  const b = new Journal(state, 'api', '1', 'survivor-b', silentLogger());
  const isLive = (i: string) => i === 'live' || i.startsWith('survivor');
  const [ca, cb] = await Promise.all([a.claimOrphans(isLive), b.claimOrphans(isLive)]);
  const claimed = [...ca, ...cb];
  assert.deepEqual(
    claimed.map((r) => r.id),
    [orphan],
  );
  assert.match(String(claimed[0]!.data['owner']), /^survivor-/);
});

test('a run taken over by another process: the old owner can neither move it on nor write its outcome', async () => {
  const state = await memory();
  const old = new Journal(state, 'api', '1', 'old', silentLogger());
  const entry = await old.begin('saga', 'r1', {}, ctx('u', 't1'), 'jwt:u');
  await old.stepper(entry)('b', { parameters: {} }, ctx('u', 't1'));
  const fresh = new Journal(state, 'api', '1', 'new', silentLogger());
  const [claimed] = await fresh.claimOrphans((i) => i === 'new');
  assert.ok(claimed);
  await assert.rejects(old.stepper(entry)('c', { parameters: {} }, ctx('u', 't1')), { code: 'RUNNER_UNAVAILABLE' });
  await old.finish(entry, { outcome: 'FAIL', http: 503 });
  const newEntry = { id: claimed.id, version: claimed.version };
  await fresh.finish(newEntry, { outcome: 'SUCCESS', http: 200, response: { by: 'new' } });
  const status = await new JournalReader([state]).lookup('jwt:u', 't1');
  assert.equal(status?.outcome, 'SUCCESS');
  assert.deepEqual(status?.response, { by: 'new' });
});

test('a correlation id finds the first run of its caller only; a reused run id replaces a finished record, never a running one', async () => {
  const state = await memory();
  const j = new Journal(state, 'api', '1', 'me', silentLogger());
  const reader = new JournalReader([state]);
  const first = await j.begin('saga', 'r1', {}, ctx('alice', 'run-a'), 'jwt:alice', 'mine');
  const second = await j.begin('saga', 'r2', {}, ctx('alice', 'run-b'), 'jwt:alice', 'mine');
  await j.finish(second, { outcome: 'SUCCESS', http: 200, response: { n: 2 } });
  await j.finish(first, { outcome: 'SUCCESS', http: 200, response: { n: 1 } });
  const mine = { byCorrelation: true };
  assert.deepEqual(
    (await reader.lookup('jwt:alice', 'mine', mine))?.response,
    { n: 1 },
    'the first run that carried it',
  );
  assert.equal((await reader.lookup('jwt:alice', 'mine', mine))?.correlationId, 'mine');
  assert.equal(await reader.lookup('jwt:alice', 'mine'), undefined, 'without byCorrelation: run ids only');
  assert.deepEqual((await reader.lookup('jwt:alice', 'run-b'))?.response, { n: 2 }, 'a run id names its own run');
  assert.equal(await reader.lookup('jwt:bob', 'mine', mine), undefined, 'another caller finds nothing');
  assert.equal(await reader.lookup('anon:127.0.0.1', 'mine', mine), undefined);

  // The polls of one stream share a run id: the next replaces the finished record ...
  const again = await j.begin('saga', 'r3', {}, ctx('alice', 'run-a'), 'jwt:alice', 'mine');
  assert.equal((await reader.lookup('jwt:alice', 'run-a'))?.status, 'RUNNING');
  // ... but a record that is still running is never touched.
  await assert.rejects(j.begin('saga', 'r4', {}, ctx('alice', 'run-a'), 'jwt:alice'), { code: 'RUNNER_UNAVAILABLE' });
  await j.stepper(again)('next', { parameters: {} }, ctx('alice', 'run-a'));
  assert.equal((await state.get(again.id))?.data['runId'], 'r3');
});

test('unwinder: a write refused while the store is down is tried again until it lands; a takeover fails at once', async () => {
  const state = await memory();
  const j = new Journal(state, 'api', '1', 'me', silentLogger());
  const entry = await j.begin('saga', 'run1', {}, ctx('u', 'req-u'), 'jwt:u');
  const update = state.update.bind(state);
  let refusals = 2;
  state.update = (...args: Parameters<typeof update>) => {
    if (refusals-- > 0) return Promise.reject(new SagawayError('STATE_UNAVAILABLE', 'state "jr" is not available'));
    return update(...args);
  };
  const failed = { outcome: 'FAIL' as const, http: 502, error: { code: 'X', message: 'x', http: 502 } };
  const undo = [{ step: 'reserve', payload: {} }] as unknown as Parameters<ReturnType<Journal['unwinder']>['begin']>[0];
  await j.unwinder(entry).begin(undo, failed);
  assert.equal(refusals, -1, 'refused twice, then written');
  const rec = await state.get(entry.id);
  assert.deepEqual((rec?.data['unwind'] as { done: unknown[] }).done, []);
  assert.equal((rec?.data['undo'] as unknown[]).length, 1);

  // another process wrote the record since: the run is theirs, no retry
  state.update = update;
  await update(entry.id, { updatedAt: Date.now() }, {});
  await assert.rejects(j.unwinder(entry).undone(0, 'SUCCESS'), { code: 'RUNNER_UNAVAILABLE' });
});
