import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bindValues, compileNamedQuery } from './named-params.js';

test('named params: sqlite gets one ? per occurrence, postgres reuses $n per name', () => {
  assert.deepEqual(compileNamedQuery('select * from t where a = :a and b = :b or a2 = :a', 'sqlite'), {
    text: 'select * from t where a = ? and b = ? or a2 = ?',
    names: ['a', 'b', 'a'],
  });
  assert.deepEqual(compileNamedQuery('select * from t where a = :a and b = :b or a2 = :a', 'postgres'), {
    text: 'select * from t where a = $1 and b = $2 or a2 = $1',
    names: ['a', 'b'],
  });
});

test('named params: literals, quoted identifiers, comments, casts and dollar quotes are left alone', () => {
  const sql =
    "select ':a', 'it''s :b', \"col:c\", x::int, $$ :d $$, $tag$ :e $tag$ -- :f\n, /* :g */ :h::text, data->>'k' = :owner";
  const c = compileNamedQuery(sql, 'postgres');
  assert.deepEqual(c.names, ['h', 'owner']);
  assert.equal(
    c.text,
    "select ':a', 'it''s :b', \"col:c\", x::int, $$ :d $$, $tag$ :e $tag$ -- :f\n, /* :g */ $1::text, data->>'k' = $2",
  );
  // an unterminated literal swallows the rest rather than exposing a placeholder inside it
  assert.deepEqual(compileNamedQuery("select ':x", 'sqlite').names, []);
  // positional $1 in PostgreSQL text is not a dollar quote
  assert.deepEqual(compileNamedQuery('select $1, :a', 'postgres').names, ['a']);
});

test('named params: values bind as scalars, objects as JSON, a missing name fails', () => {
  assert.deepEqual(bindValues(['a', 'b', 'c', 'd'], { a: 's', b: 2, c: null, d: { x: [1] } }), [
    's',
    2,
    null,
    '{"x":[1]}',
  ]);
  assert.throws(() => bindValues(['a'], {}), { code: 'VALIDATION_FAILED' });
  assert.throws(() => bindValues(['toString'], {}), { code: 'VALIDATION_FAILED' });
  assert.throws(() => bindValues(['a'], { a: Number.NaN }), { code: 'VALIDATION_FAILED' });
});
