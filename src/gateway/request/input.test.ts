import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bodyInput, MAX_BODY_DEPTH, parseJsonBody, parseQuery } from './input.js';

const code = (fn: () => unknown, c: string) => assert.throws(fn, (e: { code?: string }) => e.code === c);

test('query: repeated keys become arrays, forbidden keys are dropped, inherited names are plain keys', () => {
  assert.deepEqual(parseQuery('a=1&a=2&b=x%20y&c='), { a: ['1', '2'], b: 'x y', c: '' });
  const q = parseQuery('__proto__=1&constructor=2&prototype=3&toString=4&toString=5');
  assert.deepEqual(q, { toString: ['4', '5'] });
  assert.equal(Object.getPrototypeOf(q), Object.prototype);
  assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
  assert.equal(Object.keys(parseQuery(Array.from({ length: 400 }, (_, i) => `k${i}=1`).join('&'))).length, 256);
});

test('body: malformed JSON is INVALID_JSON; forbidden keys anywhere, also escaped, are INVALID_BODY', () => {
  code(() => parseJsonBody('{"a":'), 'INVALID_JSON');
  code(() => parseJsonBody('   '), 'INVALID_JSON');
  code(() => parseJsonBody('{"__proto__":{"polluted":1}}'), 'INVALID_BODY');
  code(() => parseJsonBody('{"a":[{"b":{"constructor":{"prototype":{}}}}]}'), 'INVALID_BODY');
  code(() => parseJsonBody('{"\\u005f_proto__":{"polluted":1}}'), 'INVALID_BODY');
  assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
  assert.deepEqual(parseJsonBody('{"proto":1,"\\u0041":2}'), { proto: 1, A: 2 });
  code(() => parseJsonBody('{"constructor":{"\\u0070rototype":{"polluted":1}}}'), 'INVALID_BODY');
  // Plain fields of those names are data: a car's maker, a design stage.
  assert.deepEqual(parseJsonBody('{"constructor":"Ferrari","prototype":"v2","car":{"constructor":{"name":"x"}}}'), {
    constructor: 'Ferrari',
    prototype: 'v2',
    car: { constructor: { name: 'x' } },
  });
});

test('body: nesting deeper than the limit is refused, at the limit accepted', () => {
  const nest = (n: number) => '['.repeat(n - 1) + '{}' + ']'.repeat(n - 1);
  assert.doesNotThrow(() => parseJsonBody(nest(MAX_BODY_DEPTH)));
  code(() => parseJsonBody(nest(MAX_BODY_DEPTH + 1)), 'INVALID_BODY');
  const deep = '['.repeat(100_000) + ']'.repeat(100_000);
  code(() => parseJsonBody(deep, 1_000_000), 'INVALID_BODY');
  // with the default maxValues its 100,000 values are refused first, before it is parsed
  code(() => parseJsonBody(deep), 'TOO_MANY_VALUES');
});

test('INPUT of a body must be an object', () => {
  assert.deepEqual(bodyInput(undefined), {});
  assert.deepEqual(bodyInput({ a: 1 }), { a: 1 });
  for (const v of [[1], 'x', 3, true, null]) code(() => bodyInput(v), 'INVALID_BODY');
});
