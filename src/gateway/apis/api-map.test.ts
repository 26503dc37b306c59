import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiMap } from './api-map.js';
import { parseSagaPath } from './saga-path.js';

const api = (path: string, runner: string, methods?: string[]) => ({
  path,
  runner,
  roles: [],
  public: true,
  ...(methods ? { methods } : {}),
});

test('the longest prefix wins, matched by whole segments; / maps everything', () => {
  const m = new ApiMap([api('/', 'root'), api('/todos', 'todo'), api('/todos/admin/', 'admin')]);
  const runner = (p: string) => m.match(parseSagaPath(p, '', false)!.segments)?.settings.runner;
  assert.equal(runner('/todos/42'), 'todo');
  assert.equal(runner('/todos'), 'todo');
  assert.equal(runner('/todosx'), 'root');
  assert.equal(runner('/todos/admin/x'), 'admin');
  assert.equal(runner('/'), 'root');
  assert.equal(new ApiMap([api('/todos', 'todo')]).match(['feed']), undefined);
});

test('methods: HEAD follows GET; the Allow list is the configured methods', () => {
  const [a] = [new ApiMap([api('/t', 'x', ['GET', 'POST'])]).match(['t'])!];
  assert.equal(ApiMap.allows(a, 'HEAD'), true);
  assert.equal(ApiMap.allows(a, 'DELETE'), false);
  assert.equal(ApiMap.allows(a, 'OPTIONS'), false);
  assert.equal(a.allow, 'GET, POST, HEAD');
});

test('saga paths: decoded per segment, extension stripped in the one-shot form, traversal refused', () => {
  assert.deepEqual(parseSagaPath('/api/request/todos/42.csv?x=1', '/api/request', true), {
    path: '/todos/42',
    segments: ['todos', '42'],
    extension: 'csv',
  });
  assert.deepEqual(parseSagaPath('/api/stream/todos/42.csv', '/api/stream', false), {
    path: '/todos/42.csv',
    segments: ['todos', '42.csv'],
  });
  assert.equal(parseSagaPath('/api/request/a%20b//c.TXT', '/api/request', true)!.path, '/a b/c');
  assert.equal(parseSagaPath('/api/request/a/%2e%2e/b', '/api/request', true), undefined);
  assert.equal(parseSagaPath('/api/request/a%2Fb', '/api/request', true), undefined);
  assert.equal(parseSagaPath('/api/request/%E0%A4%A', '/api/request', true), undefined);
  assert.equal(parseSagaPath('/api/request', '/api/request', true)!.path, '/');
  assert.equal(parseSagaPath('/api/request/.json', '/api/request', true)!.path, '/.json');
});
