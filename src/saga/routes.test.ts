import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RouteTable } from './routes.js';

const table = new RouteTable([
  { id: 'item', path: '/items/:id', methods: ['GET'] },
  { id: 'list', path: '/items', methods: ['GET', 'POST'] },
  { id: 'root', path: '/', methods: ['GET'] },
]);

test('routes: plain paths and paths with empty segments match alike', () => {
  for (const path of ['/items/42', '/items/42/', '//items//42', 'items/42']) {
    const m = table.match('GET', path);
    assert.equal(m.kind, 'found', path);
    if (m.kind === 'found') assert.deepEqual([m.saga.id, m.params], ['item', { id: '42' }], path);
  }
  const root = table.match('GET', '/');
  assert.equal(root.kind === 'found' && root.saga.id, 'root');
  assert.equal(table.match('HEAD', '/items').kind, 'found');
  assert.deepEqual(table.match('DELETE', '/items'), { kind: 'method-not-allowed', allow: ['GET', 'POST'] });
  assert.deepEqual(table.match('GET', '/nothing/here/at/all'), { kind: 'not-found' });
});
