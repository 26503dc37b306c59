import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSagaPath } from './saga-path.js';

test('saga paths: the plain fast path and the general one answer alike', () => {
  const P = '/api/request';
  const cases: [string, ReturnType<typeof parseSagaPath>][] = [
    ['/api/request/items/42', { path: '/items/42', segments: ['items', '42'] }],
    ['/api/request/items/42?x=1', { path: '/items/42', segments: ['items', '42'] }],
    ['/api/request/a', { path: '/a', segments: ['a'] }],
    ['/api/request', { path: '/', segments: [] }],
    ['/api/request/', { path: '/', segments: [] }],
    ['/api/request//a//b/', { path: '/a/b', segments: ['a', 'b'] }],
    ['/api/request/a/b/', { path: '/a/b', segments: ['a', 'b'] }],
    ['/api/request/a%20b/c', { path: '/a b/c', segments: ['a b', 'c'] }],
    ['/api/request/a%2Fb', undefined],
    ['/api/request/a/../b', undefined],
    ['/api/request/a/%2e%2e/b', undefined],
    ['/api/request/todos.json', { path: '/todos', segments: ['todos'], extension: 'json' }],
    ['/api/request/v1.2/x', { path: '/v1.2/x', segments: ['v1.2', 'x'] }],
    ['/api/request/a%zz', undefined],
  ];
  for (const [url, want] of cases) assert.deepEqual(parseSagaPath(url, P, true), want, url);
  assert.deepEqual(parseSagaPath('/api/stream/todos.json', '/api/stream', false), {
    path: '/todos.json',
    segments: ['todos.json'],
  });
  assert.equal(parseSagaPath(`/api/request/${'a'.repeat(2049)}`, P, true), undefined);
});
