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
