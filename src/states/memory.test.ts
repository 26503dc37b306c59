import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runStateContract } from '../../test/states/contract.js';
import { MemoryState } from './memory.js';

runStateContract('memory', async (table, options) => {
  const s = new MemoryState({ alias: table, queries: { byOwner: { filter: { owner: ':owner' } } }, ...options });
  await s.init();
  return s;
});

test('memory: a query filter mixes bound parameters and constants', async () => {
  const s = new MemoryState({ alias: 'm', queries: { openOf: { filter: { owner: ':who', done: false } } } });
  await s.create('a', { owner: 'ann', done: false });
  await s.create('b', { owner: 'ann', done: true });
  await s.create('c', { owner: ':who', done: false });
  const r = await s.query('openOf', { who: 'ann' });
  assert.deepEqual(
    r.list.map((x) => (x as { id: string }).id),
    ['a'],
  );
  // a value that looks like a parameter is data once bound: it is not resolved again
  const literal = await s.query('openOf', { who: ':who' });
  assert.deepEqual(
    literal.list.map((x) => (x as { id: string }).id),
    ['c'],
  );
});
