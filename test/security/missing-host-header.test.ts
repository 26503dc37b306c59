import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ok, rawHttp, ScriptedService, startGateway } from '../gateway/harness.js';

/**
 * Found by the hostile re-test of issue 9 (item 9, errors outside the contract): an HTTP/1.1
 * request without a Host header was answered by Node itself (`requireHostHeader`) with a bare
 * `400` — no body, no content type, no request id, no nosniff — before fastify or any hook saw it.
 * It must be the gateway's own `400 BAD_REQUEST` problem+json with a requestId, reach no saga,
 * and leave the requests around it served. HTTP/1.0 has no Host and is served as before.
 */

const PROBLEM_KEYS = ['code', 'detail', 'requestId', 'status', 'title', 'type'];

function parseRaw(text: string): { status: string; headers: Record<string, string>; body: string } {
  const end = text.indexOf('\r\n\r\n');
  const [status, ...lines] = text.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const l of lines) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
  return { status: status!, headers, body: text.slice(end + 4) };
}

test('an HTTP/1.1 request without Host is 400 BAD_REQUEST problem+json, never a bare Node answer', async () => {
  const svc = new ScriptedService((req) => ok({ got: req.input }));
  const { base, close } = await startGateway(svc);
  const port = Number(new URL(base).port);
  try {
    for (const path of ['/api/request/x?a=<evil>', '/api/stream/x', '/api/status/abc', '/healthz']) {
      const res = parseRaw(await rawHttp(port, `GET ${path} HTTP/1.1\r\n\r\n`));
      assert.match(res.status, /^HTTP\/1\.1 400 /, path);
      assert.match(res.headers['content-type'] ?? '', /^application\/problem\+json/, `${path}: ${JSON.stringify(res)}`);
      assert.equal(res.headers['x-content-type-options'], 'nosniff', path);
      const body = JSON.parse(res.body) as Record<string, unknown>;
      assert.deepEqual(Object.keys(body).sort(), PROBLEM_KEYS);
      assert.equal(body['code'], 'BAD_REQUEST');
      assert.equal(body['requestId'], res.headers['x-request-id']);
      assert.ok(!res.body.includes('evil'), 'nothing of the request is echoed');
    }
    assert.equal(svc.calls.length, 0, 'no saga ran for a request without Host');

    // HTTP/1.0 has no Host header: served. And a normal request after them all: served.
    const old = parseRaw(await rawHttp(port, 'GET /api/request/x?a=1 HTTP/1.0\r\n\r\n'));
    assert.match(old.status, /^HTTP\/1\.1 200 /, JSON.stringify(old));
    const fine = await fetch(base + '/api/request/x?a=2');
    assert.equal(fine.status, 200);
    assert.deepEqual(await fine.json(), { got: { a: '2' } });
    assert.equal(svc.calls.length, 2);
  } finally {
    await close();
  }
});
