import { test } from 'node:test';
import assert from 'node:assert/strict';
import jsonata from 'jsonata';
import type { RequestContext } from '../core/types.js';
import { compileExpression } from './expression.js';

const ctx = { request: {}, user: null } as unknown as RequestContext;
const big = 'x'.repeat(1024);
const input = (): Record<string, unknown> =>
  JSON.parse(`{"a":{"list":[1,2],"s":"${big}"},"__proto__":{"polluted":true},"n":1}`) as Record<string, unknown>;

test('expression results are copies with JSON semantics, without serialising the data', async () => {
  for (const source of [
    '$',
    'a',
    '{ "a": a, "f": $uppercase, "seq": a.list.($ * 2), "none": nothing }',
    'a.list',
    '[a.s, n]',
  ]) {
    const raw: unknown = await jsonata(source).evaluate(input());
    const got = await compileExpression(source).evaluate(input(), ctx);
    assert.deepEqual(got, JSON.parse(JSON.stringify(raw)), source);
  }
  const payload = input();
  const result = (await compileExpression('{ "a": a, "all": $ }').evaluate(payload, ctx)) as Record<string, unknown>;
  const a = result['a'] as { list: number[]; s: string };
  assert.notEqual(a, payload['a'], 'the object is a copy');
  a.list.push(3);
  assert.deepEqual((payload['a'] as { list: number[] }).list, [1, 2], 'writing into the result leaves the input alone');
  assert.equal(a.s, big);
  const all = result['all'] as Record<string, unknown>;
  assert.equal(Object.getPrototypeOf(all), Object.prototype, 'a __proto__ key stays data');
  assert.deepEqual(Object.getOwnPropertyDescriptor(all, '__proto__')?.value, { polluted: true });
  assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
  const seq = await compileExpression('a.list.($ * 2)').evaluate(payload, ctx);
  assert.deepEqual(Object.keys(seq as object), ['0', '1'], 'no sequence marker');
});
