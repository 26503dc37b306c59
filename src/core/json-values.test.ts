import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { countJsonValues, countValues, mayExceedValues } from './json-values.js';

test('countJsonValues counts the root, every element and every member value, not keys', () => {
  assert.equal(countJsonValues('1'), 1);
  assert.equal(countJsonValues('[]'), 1);
  assert.equal(countJsonValues('{}'), 1);
  assert.equal(countJsonValues('[[],[ ],{ \n}]'), 4);
  assert.equal(countJsonValues('{"a":1,"b":[true,null]}'), 5);
  // commas, brackets and escaped quotes inside strings are text
  assert.equal(countJsonValues('{"a,[{":"x\\",[{,","b":"\\\\"}'), 3);
});

test('countJsonValues stops once past max', () => {
  const text = `[${Array(1000).fill('[]').join(',')}]`;
  assert.equal(countJsonValues(text), 1001);
  assert.equal(countJsonValues(text, 10), 11);
});

test('the text count, the parsed count and the length bound agree on any JSON', () => {
  fc.assert(
    fc.property(fc.json(), (text) => {
      const n = countJsonValues(text);
      assert.equal(n, countValues(JSON.parse(text)));
      // what lets a short text skip the count: it can never hold more than length / 2 + 1
      assert.ok(n <= text.length / 2 + 1, `${text}: ${n} values in ${text.length} characters`);
      assert.equal(mayExceedValues(text.length, n - 1), true);
    }),
    { numRuns: 2000 },
  );
});
