import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { silentLogger } from '../../core/logger.js';
import { createState } from '../../states/index.js';
import type { State } from '../../states/state.js';
import { Journal } from './journal.js';

const dir = await mkdtemp(join(tmpdir(), 'sagaway-jret-'));
after(() => rm(dir, { recursive: true, force: true }));

const ctx = (id: string) => ({ request: { method: 'GET', path: '/x', id, query: {} }, user: null });
const DAY = 24 * 3600_000;

async function stores(): Promise<[string, State][]> {
  const memory = createState({ type: 'memory', alias: 'jm', queries: {} }, silentLogger());
  const sqlite = createState(
    { type: 'sqlite', alias: 'js', file: join(dir, `j${Date.now()}.db`), table: 'journal', queries: {} },
    silentLogger(),
  );
  await memory.init();
  await sqlite.init();
  return [
    ['memory', memory],
    ['sqlite', sqlite],
  ];
}

test('journal retention: finished runs and index entries past it go; running, young and other runners stay', async () => {
  for (const [kind, state] of await stores()) {
    const j = new Journal(state, 'api', '1', 'me', silentLogger());
    const other = new Journal(state, 'other', '1', 'me', silentLogger());
    const oldDone = await j.begin('s', 'r1', {}, ctx('old-done'), 'anon:x', 'corr-old');
    await j.finish(oldDone, { outcome: 'SUCCESS', http: 200 });
    const running = await j.begin('s', 'r2', {}, ctx('old-running'), 'anon:x');
    const otherDone = await other.begin('s', 'r3', {}, ctx('other-done'), 'anon:x');
    await other.finish(otherDone, { outcome: 'SUCCESS', http: 200 });
    // eight days later: one more run finishes, young
    const now = Date.now() + 8 * DAY;
    const young = await j.begin('s', 'r4', {}, ctx('young'), 'anon:x');
    await j.finish(young, { outcome: 'SUCCESS', http: 200 });
    await state.update(young.id, { updatedAt: now - 1000 });

    assert.equal(await j.prune(7 * DAY, now), 2, `${kind}: the old run and its correlation entry`);
    assert.equal(await state.get(oldDone.id), undefined, kind);
    assert.ok(await state.get(running.id), `${kind}: a running run is never pruned`);
    assert.ok(await state.get(young.id), `${kind}: a young one stays`);
    assert.ok(await state.get(otherDone.id), `${kind}: another runner's retention is its own`);
    assert.equal(await j.prune(7 * DAY, now), 0, `${kind}: nothing left to prune`);
    assert.equal(await other.prune(7 * DAY, now), 1, kind);
    await state.close();
  }
});

test('journal retention is bounded per call: at most 10 pages of 100 records', async () => {
  const state = (await stores())[1]![1];
  const j = new Journal(state, 'api', '1', 'me', silentLogger());
  const entries = await Promise.all(
    Array.from({ length: 1100 }, (_, i) => j.begin('s', `r${i}`, {}, ctx(`q${i}`), 'anon:x')),
  );
  await Promise.all(entries.map((e) => j.finish(e, { outcome: 'SUCCESS', http: 200 })));
  const later = Date.now() + 8 * DAY;
  assert.equal(await j.prune(7 * DAY, later), 1000);
  assert.equal(await j.prune(7 * DAY, later), 100);
  assert.equal(await j.prune(7 * DAY, later), 0);
  await state.close();
});
