import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_BATCH, TickBatcher } from './batcher.js';

/** The wait store's statement batcher (batcher.ts): what shares a statement, and what does not. */

test('the calls of one turn share one statement, each with its own answer in order', async () => {
  const statements: number[][] = [];
  const b = new TickBatcher<number, number>(async (items) => {
    statements.push(items);
    return items.map((i) => i * 10);
  });
  const answers = await Promise.all([1, 2, 3].map((i) => b.add(i)));
  assert.deepEqual(answers, [10, 20, 30]);
  assert.deepEqual(statements, [[1, 2, 3]]);
});

test('two items with the same key never share a statement', async () => {
  const statements: string[][] = [];
  const b = new TickBatcher<string, string>(
    async (items) => {
      statements.push(items);
      return items;
    },
    (item) => item.split(':')[0] as string,
  );
  await Promise.all(['w1:a', 'w2:a', 'w1:b'].map((i) => b.add(i)));
  assert.equal(statements.length, 2);
  assert.deepEqual(statements[0], ['w1:a', 'w2:a']);
  assert.deepEqual(statements[1], ['w1:b']);
});

test('a failed statement fails each of its calls with its error; the next statement is unaffected', async () => {
  let first = true;
  const b = new TickBatcher<number, number>(async (items) => {
    if (first) {
      first = false;
      throw new Error('down');
    }
    return items;
  });
  const failed = await Promise.allSettled([b.add(1), b.add(2)]);
  assert.deepEqual(
    failed.map((r) => (r.status === 'rejected' ? (r.reason as Error).message : 'ok')),
    ['down', 'down'],
  );
  assert.equal(await b.add(3), 3);
});

test('a statement holds MAX_BATCH items at most', async () => {
  const sizes: number[] = [];
  const b = new TickBatcher<number, number>(async (items) => {
    sizes.push(items.length);
    return items;
  });
  await Promise.all(Array.from({ length: MAX_BATCH + 7 }, (_, i) => b.add(i)));
  assert.deepEqual(sizes, [MAX_BATCH, 7]);
});
