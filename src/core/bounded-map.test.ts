import assert from 'node:assert/strict';
import { test } from 'node:test';
import { keepBounded } from './bounded-map.js';

test('keepBounded: at most max entries, the oldest forgotten first; a key put again is the newest', () => {
  const m = new Map<string, number>();
  for (const [k, v] of [
    ['a', 1],
    ['b', 2],
    ['c', 3],
  ] as const)
    keepBounded(m, k, v, 3);
  keepBounded(m, 'a', 10, 3); // a is now the newest: b is the oldest
  keepBounded(m, 'd', 4, 3);
  assert.deepEqual(
    [...m],
    [
      ['c', 3],
      ['a', 10],
      ['d', 4],
    ],
  );
});
