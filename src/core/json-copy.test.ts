import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jsonCopy, NotJsonError } from './json-copy.js';

const viaText = (v: unknown): unknown => {
  const text = JSON.stringify(v);
  return text === undefined ? undefined : (JSON.parse(text) as unknown);
};

test('the copy equals a JSON round trip, for every kind of value JSON can hold or drops', () => {
  const samples: unknown[] = [
    null,
    'x',
    0,
    -1.5,
    true,
    NaN,
    Infinity,
    [],
    {},
    [1, 'a', null, undefined, () => 1, Symbol('s'), NaN, { a: undefined }],
    { a: 1, b: { c: [1, { d: 'e' }] }, f: undefined, g: () => 1, h: new Date(0), i: new Map([[1, 2]]) },
    JSON.parse('{"__proto__": {"polluted": true}, "x": 1}'),
    { n: new Number(3), s: new String('t'), b: new Boolean(false) },
    { toJSON: () => ({ replaced: true }) },
  ];
  for (const v of samples) assert.deepEqual(jsonCopy(v), viaText(v), JSON.stringify(v) ?? String(v));
  assert.equal(jsonCopy(undefined), undefined);
});

test('the copy shares no container with the original, and a __proto__ key stays data', () => {
  const inner = { list: [1, 2] };
  const original = { a: inner, b: inner };
  const c = jsonCopy(original) as { a: { list: number[] }; b: { list: number[] } };
  assert.notEqual(c.a, inner);
  assert.notEqual(c.a, c.b);
  assert.notEqual(c.a.list, inner.list);
  c.a.list.push(3);
  assert.deepEqual(inner.list, [1, 2]);
  const p = jsonCopy(JSON.parse('{"__proto__": {"polluted": true}}')) as Record<string, unknown>;
  assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
  assert.ok(Object.hasOwn(p, '__proto__'));
});

test('a BigInt and a cycle throw, as JSON.stringify does', () => {
  assert.throws(() => jsonCopy({ n: 1n }), NotJsonError);
  const cyclic: Record<string, unknown> = {};
  cyclic['self'] = cyclic;
  assert.throws(() => jsonCopy(cyclic), NotJsonError);
  assert.throws(() => jsonCopy([[cyclic]]), NotJsonError);
});
