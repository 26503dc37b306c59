import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MemoryState } from '../../states/memory.js';
import { listRuns, RunIndexes } from './run-list.js';

/**
 * The run list's merge of its per-status lists (run-list.ts): a store may end a page before its
 * `limit` (its byte or value budget: `maxPageSize`, `maxValues`), and the runs that list did not
 * return must not be skipped by the page's cursor.
 */

const hex = (n: number) => n.toString(16).padStart(8, '0');

async function journal(): Promise<MemoryState> {
  // a page of ~2 records of the big ones (the first record of a page always fits)
  const state = new MemoryState({ alias: 'jr', maxPageBytes: 2500 });
  await state.init();
  // 6 failed runs that kept a big payload, started at 100..105
  for (let i = 0; i < 6; i++) {
    await state.create(`run-a${hex(i)}`, {
      runId: `done-${i}`,
      requestId: `done-${i}`,
      runner: 'r',
      sagaId: 's',
      status: 'DONE',
      payload: { blob: 'x'.repeat(1000) },
      startedAt: 100 + i,
      updatedAt: 100 + i,
    });
  }
  // 10 suspended runs, older (50..59), small
  for (let i = 0; i < 10; i++) {
    await state.create(`run-b${hex(i)}`, {
      runId: `susp-${i}`,
      requestId: `susp-${i}`,
      runner: 'r',
      sagaId: 's',
      status: 'SUSPENDED',
      startedAt: 50 + i,
      updatedAt: 50 + i,
    });
  }
  return state;
}

test('run list: a status list cut short by the store page budget does not make the pages skip its runs', async () => {
  const state = await journal();
  const indexes = new RunIndexes();
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 20; pages++) {
    const page = await listRuns([state], indexes, { limit: 10, ...(cursor ? { cursor } : {}) });
    seen.push(...page.runs.map((r) => r.runId));
    cursor = page.next;
    if (cursor === undefined) break;
  }
  const expected = [
    ...[5, 4, 3, 2, 1, 0].map((i) => `done-${i}`),
    ...[9, 8, 7, 6, 5, 4, 3, 2, 1, 0].map((i) => `susp-${i}`),
  ];
  assert.deepEqual(seen, expected, 'every run once, newest first');
});
