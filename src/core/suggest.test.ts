import assert from 'node:assert/strict';
import { test } from 'node:test';
import { closest, editDistance, suggestion } from './suggest.js';

test('edit distance counts inserts, deletes, replacements and swapped neighbours, case ignored', () => {
  assert.equal(editDistance('Create', 'create'), 0);
  assert.equal(editDistance('Craete', 'Create'), 1);
  assert.equal(editDistance('slugs', 'slug'), 1);
  assert.equal(editDistance('wirte', 'write'), 1);
  assert.equal(editDistance('', 'abc'), 3);
  assert.equal(editDistance('kitten', 'sitting'), 3);
});

test('closest: a typo finds its name; a word far from every name finds none', () => {
  assert.equal(closest('Craete', ['Create', 'Update', 'Delete']), 'Create');
  assert.equal(closest('GetLst', ['Get', 'GetList']), 'GetList');
  assert.equal(closest('payments', ['orders', 'users']), undefined);
  assert.equal(closest('x'.repeat(300), ['x']), undefined);
});

test('suggestion: the guess and the sorted list; none to choose from says so', () => {
  assert.equal(suggestion('slugs', ['todos', 'slug'], 'states'), '; did you mean "slug"? states: slug, todos');
  assert.equal(suggestion('zzz', ['b', 'a'], 'states'), '; states: a, b');
  assert.equal(suggestion('zzz', [], 'states'), '; there are no states');
  const many = Array.from({ length: 25 }, (_, i) => `s${String(i).padStart(2, '0')}`);
  assert.match(suggestion('q', many, 'steps'), /s19, …$/);
});
