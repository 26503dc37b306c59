import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Principal } from '../../core/types.js';
import { canonicalJson, pollKey, shareBase, shareBinding, type ShareInput } from './share.js';

const alice: Principal = { sub: 'alice', roles: ['user', 'admin'], claims: {}, anonymous: false, kind: 'jwt' };
const bob: Principal = { ...alice, sub: 'bob' };
const anon: Principal = { sub: 'anonymous', roles: [], claims: {}, anonymous: true };
const base: ShareInput = {
  share: 'caller',
  api: '/feed',
  principal: alice,
  runner: 'main',
  method: 'GET',
  path: '/feed',
  input: { a: 1, b: [1, { c: 2, d: 3 }] },
  query: {},
  body: false,
};

test('canonical JSON sorts keys at every depth and leaves arrays in order', () => {
  assert.equal(canonicalJson({ b: 1, a: { d: [2, 1], c: null } }), '{"a":{"c":null,"d":[2,1]},"b":1}');
  assert.equal(canonicalJson({ a: undefined, b: 'x' }), '{"b":"x"}');
  assert.equal(canonicalJson('a"b'), '"a\\"b"');
  assert.equal(canonicalJson(undefined), 'null');
});

test('one key for the same poll whatever the key order; another for anything that changes the run', () => {
  const key = shareBase(base)!;
  assert.equal(shareBase({ ...base, input: { b: [1, { d: 3, c: 2 }], a: 1 } }), key);
  assert.equal(shareBase({ ...base, principal: { ...alice, roles: ['admin', 'user'] } }), key, 'roles as a set');
  const token = (claims: Record<string, unknown>) => shareBase({ ...base, principal: { ...alice, claims } });
  assert.equal(
    token({ tenant: 't1', exp: 1, iat: 2 }),
    token({ tenant: 't1', exp: 3, iat: 4, jti: 'x' }),
    'a new token',
  );
  assert.notEqual(token({ tenant: 't1' }), token({ tenant: 't2' }), 'another tenant');
  for (const other of [
    { principal: bob },
    { principal: { ...alice, roles: ['user'] } },
    { principal: { ...alice, kind: 'apikey' as const, sub: 'apikey:alice' } },
    { principal: anon },
    { method: 'POST' },
    { path: '/feed/2' },
    { runner: 'other' },
    { input: { a: 2, b: [1, { c: 2, d: 3 }] } },
    { share: 'all' as const },
  ])
    assert.notEqual(shareBase({ ...base, ...other }), key, JSON.stringify(other));
  // For a body method the query is part of the run (`@.request.query`), so of the key.
  const post = { ...base, method: 'POST', body: true };
  assert.notEqual(shareBase({ ...post, query: { q: '1' } }), shareBase({ ...post, query: { q: '2' } }));
  assert.equal(shareBase({ ...base, share: 'off' }), undefined);
});

test('share all: one key for every caller of the API, tokens bound to the API', () => {
  const all = { ...base, share: 'all' as const };
  assert.equal(shareBase({ ...all, principal: bob }), shareBase({ ...all, principal: anon }));
  assert.notEqual(shareBase({ ...all, api: '/other' }), shareBase(all));
  assert.equal(shareBinding('all', '/feed', alice), 'api:/feed');
  assert.equal(shareBinding('caller', '/feed', alice), 'jwt:alice');
  assert.equal(shareBinding('off', '/feed', anon), 'anon');
});

test('the poll key tells the first poll from every previous', () => {
  const b = shareBase(base)!;
  const keys = [undefined, null, 0, '0', '', { a: 1 }, [1]].map((p) => pollKey(b, p));
  assert.equal(new Set(keys).size, keys.length);
  assert.equal(pollKey(b, { x: 1, y: 2 }), pollKey(b, { y: 2, x: 1 }));
});
