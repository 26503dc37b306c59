import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { MemoryState } from './memory.js';
import { SqliteState } from './sqlite.js';
import type { State } from './state.js';

/**
 * Property: paging with the cursor, in pages of any size, for any sort, visits exactly the
 * records of one big page, in the same order, which is the reference order (missing values
 * first ascending, ties by id) — also while records are inserted between pages.
 */

type Rec = { id: string; v?: number };

const records = fc.uniqueArray(
  fc.record({
    id: fc.stringMatching(/^[a-z0-9]{1,6}$/),
    v: fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }),
  }),
  { selector: (r) => r.id, maxLength: 40 },
);
const sorts = fc.constantFrom(undefined, 'v', '-v', 'id', '-id');

function reference(recs: Rec[], sort: string | undefined): string[] {
  if (sort === undefined) return recs.map((r) => r.id);
  const desc = sort.startsWith('-');
  const field = desc ? sort.slice(1) : sort;
  const key = (r: Rec): number | string => (field === 'id' ? r.id : (r.v ?? -1));
  const sorted = [...recs].sort((a, b) => {
    const ka = key(a);
    const kb = key(b);
    const c = ka < kb ? -1 : ka > kb ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
    return desc ? -c : c;
  });
  return sorted.map((r) => r.id);
}

async function fill(s: State, recs: Rec[]): Promise<void> {
  for (const r of recs) await s.create(r.id, r.v === undefined ? {} : { v: r.v });
}

async function pageAll(s: State, sort: string | undefined, limit: number, between?: (i: number) => Promise<void>) {
  const seen: string[] = [];
  let next: string | undefined;
  let i = 0;
  do {
    const page = await s.list({ sort, limit, after: next });
    seen.push(...page.list.map((r) => r.id));
    next = page.next;
    if (between) await between(i++);
  } while (next);
  return seen;
}

const makers: [string, () => Promise<State>][] = [
  ['memory', async () => new MemoryState({ alias: 'p' })],
  [
    'sqlite',
    async () => {
      const s = new SqliteState({ alias: 'p', file: ':memory:', table: 'p' });
      await s.init();
      return s;
    },
  ],
];

for (const [name, make] of makers) {
  test(`${name}: cursor paging equals the reference order for any sort and page size`, async () => {
    await fc.assert(
      fc.asyncProperty(records, sorts, fc.integer({ min: 1, max: 7 }), async (recs, sort, limit) => {
        const s = await make();
        try {
          await fill(s, recs);
          const seen = await pageAll(s, sort, limit);
          assert.deepEqual(seen, reference(recs, sort));
        } finally {
          await s.close();
        }
      }),
      { numRuns: 60 },
    );
  });

  test(`${name}: paging while records are inserted never repeats or loses a record`, async () => {
    await fc.assert(
      fc.asyncProperty(records, records, sorts, fc.integer({ min: 1, max: 5 }), async (recs, extra, sort, limit) => {
        const s = await make();
        try {
          await fill(s, recs);
          const ids = new Set(recs.map((r) => r.id));
          const added = extra.filter((r) => !ids.has(r.id));
          const seen = await pageAll(s, sort, limit, async (i) => {
            const r = added[i];
            if (r) await s.create(r.id, r.v === undefined ? {} : { v: r.v });
          });
          assert.equal(new Set(seen).size, seen.length, 'a record was repeated');
          for (const id of ids) assert.ok(seen.includes(id), `record ${id} was lost`);
          // and what was seen is in the final order
          const order = reference([...recs, ...added.slice(0, Math.max(0, seen.length))], sort);
          const positions = seen.map((id) => order.indexOf(id));
          assert.deepEqual(
            positions,
            [...positions].sort((a, b) => a - b),
          );
        } finally {
          await s.close();
        }
      }),
      { numRuns: 40 },
    );
  });
}
