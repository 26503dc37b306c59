import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SagawayError } from '../../core/errors.js';
import { httpSystem } from '../../../test/handlers/rest-loopback.js';
import { buildHeaders, buildRequest, buildUrl } from './request.js';

function errorCode(fn: () => unknown): string {
  try {
    fn();
    return 'OK';
  } catch (err) {
    assert.ok(err instanceof SagawayError);
    return err.code;
  }
}

describe('buildUrl', () => {
  const base = 'https://api.example.com/v1';

  test('joins the base path and the step path, with or without slashes', () => {
    assert.equal(buildUrl(base, '/items/42', undefined).href, 'https://api.example.com/v1/items/42');
    assert.equal(buildUrl(`${base}/`, 'items', undefined).href, 'https://api.example.com/v1/items');
    assert.equal(buildUrl(base, undefined, undefined).href, 'https://api.example.com/v1');
    assert.equal(buildUrl('https://api.example.com', '/x', undefined).href, 'https://api.example.com/x');
  });

  test('keeps the base query, then the query object, every value encoded', () => {
    const url = buildUrl('https://api.example.com/v1?key=k', '/s', { q: 'a&b=c', list: [1, true], no: null });
    assert.equal(url.search, '?key=k&q=a%26b%3Dc&list=1&list=true');
    assert.equal(url.pathname, '/v1/s');
  });

  test('refuses anything that leaves the origin: SSRF_BLOCKED', () => {
    for (const path of [
      'https://evil.example/',
      'http:evil.example',
      '//evil.example/x',
      'file:///etc/passwd',
      'javascript:alert(1)',
    ]) {
      assert.equal(
        errorCode(() => buildUrl(base, path, undefined)),
        'SSRF_BLOCKED',
        path,
      );
    }
  });

  test('refuses dot segments that climb out of the base path, also encoded', () => {
    for (const path of ['/../admin', '/a/../../admin', '/%2e%2e/admin', '/.%2E/admin', '..']) {
      assert.equal(
        errorCode(() => buildUrl(base, path, undefined)),
        'SSRF_BLOCKED',
        path,
      );
    }
    assert.equal(buildUrl(base, '/a/../b', undefined).pathname, '/v1/b');
  });

  test('refuses backslashes, control characters and fragments', () => {
    for (const path of ['/a\\b', '\\\\evil.example', '/a\r\nHost: x', '/a#frag', '/a\u0000', '/items/1?admin=true']) {
      assert.equal(
        errorCode(() => buildUrl(base, path, undefined)),
        'VALIDATION_FAILED',
        JSON.stringify(path),
      );
    }
  });

  test('refuses a non-string path and a non-object query', () => {
    assert.equal(
      errorCode(() => buildUrl(base, 42, undefined)),
      'VALIDATION_FAILED',
    );
    assert.equal(
      errorCode(() => buildUrl(base, '/x', 'a=b')),
      'VALIDATION_FAILED',
    );
    assert.equal(
      errorCode(() => buildUrl(base, '/x', { nested: { a: 1 } })),
      'VALIDATION_FAILED',
    );
  });
});

describe('buildHeaders', () => {
  test('merges step headers over system headers, case-insensitively', () => {
    const h = buildHeaders({ 'X-Api-Version': '1', Accept: 'text/plain' }, { 'x-api-version': 2, 'X-Trace': 't' });
    assert.deepEqual(h, { 'x-api-version': '2', accept: 'text/plain', 'x-trace': 't' });
  });

  test('refuses hop-by-hop, Host and framing headers', () => {
    for (const name of [
      'Host',
      'connection',
      'Transfer-Encoding',
      'te',
      'upgrade',
      'keep-alive',
      'proxy-authorization',
      'content-length',
      'expect',
      'trailer',
    ]) {
      assert.equal(
        errorCode(() => buildHeaders({}, { [name]: 'x' })),
        'VALIDATION_FAILED',
        name,
      );
    }
    assert.equal(
      errorCode(() => buildHeaders({ Host: 'internal' }, {})),
      'VALIDATION_FAILED',
    );
  });

  test('refuses header injection without echoing the value', () => {
    try {
      buildHeaders({}, { Authorization: 'Bearer s3cret\r\nX-Evil: 1' });
      assert.fail('not refused');
    } catch (err) {
      assert.ok(err instanceof SagawayError);
      assert.equal(err.code, 'VALIDATION_FAILED');
      assert.match(err.message, /authorization/);
      assert.doesNotMatch(err.message, /s3cret/);
    }
  });

  test('refuses invalid names and non-scalar values; skips null', () => {
    assert.equal(
      errorCode(() => buildHeaders({}, { 'bad name': 'x' })),
      'VALIDATION_FAILED',
    );
    assert.equal(
      errorCode(() => buildHeaders({}, { __proto__x: 'x', 'x-obj': { a: 1 } })),
      'VALIDATION_FAILED',
    );
    assert.equal(
      errorCode(() => buildHeaders({}, JSON.parse('{"__proto__":"x"}'))),
      'VALIDATION_FAILED',
    );
    assert.deepEqual(buildHeaders({}, { 'x-a': null }), {});
  });
});

describe('buildRequest', () => {
  const system = httpSystem('api', 'https://api.example.com/v1', { headers: { 'X-Key': 'k' } });

  test('GET by default, with accept and user-agent defaults, and no body', () => {
    const r = buildRequest(system, {}, { ignored: true });
    assert.equal(r.method, 'GET');
    assert.equal(r.body, undefined);
    assert.equal(r.headers['x-key'], 'k');
    assert.match(r.headers['accept'] ?? '', /application\/json/);
  });

  test('the input is the JSON body of a POST, parameters.body overrides it', () => {
    assert.equal(buildRequest(system, { method: 'POST' }, { a: 1 }).body, '{"a":1}');
    assert.equal(buildRequest(system, { method: 'PATCH', body: [1] }, { a: 1 }).body, '[1]');
    assert.equal(buildRequest(system, { method: 'DELETE' }, undefined).body, undefined);
  });

  test('refuses unknown methods and a body on GET or HEAD', () => {
    for (const method of ['CONNECT', 'TRACE', 'FOO', 7]) {
      assert.equal(
        errorCode(() => buildRequest(system, { method }, undefined)),
        'VALIDATION_FAILED',
        String(method),
      );
    }
    assert.equal(
      errorCode(() => buildRequest(system, { method: 'HEAD', body: 'x' }, undefined)),
      'VALIDATION_FAILED',
    );
  });
});
