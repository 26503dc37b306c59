import { test } from 'node:test';
import assert from 'node:assert/strict';
import jsonata from 'jsonata';
import type { RequestContext } from '../core/types.js';
import { directForm, SLOW } from './expression-direct.js';
import { compileExpression } from './expression.js';

const ctx = { request: {}, user: null } as unknown as RequestContext;

const SIMPLE = [
  'item.active',
  'a',
  'a.b.c',
  '`a b`.c',
  '{ "id": parameters.id, "by": "bench", "n": 3, "t": true, "f": false, "z": null }',
  '{ "deep": item, "missing": nothing.here }',
];
const NOT_SIMPLE = [
  '$',
  '$.a',
  'a[0]',
  'a.b[c > 1]',
  'constructor',
  'a.__proto__',
  'a.toString',
  '{ "constructor": a }',
  '{ "k": a, "k": b }',
  '{ "k": a + 1 }',
  'a.($ * 2)',
  '$request.id',
  '{ a: 1 }',
];
const DATA: unknown[] = [
  {},
  { item: { active: true }, parameters: { id: '7' } },
  { item: { active: null } },
  { item: null },
  { item: 'x' },
  { item: 5 },
  { item: false },
  { item: { active: { nested: [1, 2] } } },
  { item: [{ active: 1 }, { active: 2 }] },
  { item: { active: [1, [2]] } },
  { a: { b: { c: 'deep' } }, 'a b': { c: 1 } },
  { a: [{ b: { c: 1 } }] },
  { a: { b: [{ c: 1 }, { c: 2 }] } },
  { parameters: { id: [1] } },
  { parameters: null },
  JSON.parse('{"__proto__":{"active":1},"item":{"__proto__":{"active":2}}}'),
];

test('the direct form is taken only for a field path or an object of literals and paths', () => {
  for (const source of SIMPLE) assert.ok(directForm(jsonata(source).ast()), source);
  for (const source of NOT_SIMPLE) assert.equal(directForm(jsonata(source).ast()), undefined, source);
});

test('the direct form answers what JSONata answers, or leaves the data to JSONata', async () => {
  for (const source of [...SIMPLE, ...NOT_SIMPLE]) {
    const compiled = compileExpression(source);
    for (const data of DATA) {
      const input = (): unknown => structuredClone(data);
      const want: unknown = await jsonata(source)
        .evaluate(input(), {})
        .then((v: unknown) => (v === undefined ? undefined : (JSON.parse(JSON.stringify(v)) as unknown)))
        .catch((e: { code?: string }) => `error ${e.code}`);
      const now = await Promise.resolve()
        .then(() => compiled.evaluateNow(input(), ctx))
        .catch((e: { code?: string }) => `error ${e.code}`);
      const later = await compiled.evaluate(input(), ctx).catch((e: { code?: string }) => `error ${e.code}`);
      assert.deepEqual(now, want, `${source} on ${JSON.stringify(data)}`);
      assert.deepEqual(later, want, `${source} on ${JSON.stringify(data)} (evaluate)`);
    }
  }
});

test('a direct result is synchronous, a copy, and SLOW where JSONata sequences apply', () => {
  const payload = { item: { active: { list: [1] } }, parameters: { id: 'p' } };
  const got = compileExpression('item.active').evaluateNow(payload, ctx) as { list: number[] };
  assert.ok(!(got instanceof Promise));
  assert.deepEqual(got, { list: [1] });
  got.list.push(2);
  assert.deepEqual(payload.item.active.list, [1], 'writing into the result leaves the payload alone');
  const obj = compileExpression('{ "id": parameters.id, "by": "x" }').evaluateNow(payload, ctx);
  assert.deepEqual(obj, { id: 'p', by: 'x' });
  assert.equal(directForm(jsonata('item').ast())!({ item: [1] }), SLOW);
  assert.ok(compileExpression('item').evaluateNow({ item: [1] }, ctx) instanceof Promise);
});
