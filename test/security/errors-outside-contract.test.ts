import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ok, rawHttp, ScriptedService, startGateway } from '../gateway/harness.js';

/**
 * Issue 9, item 9: every error the gateway returns is problem+json with a requestId (DESIGN §5),
 * also the ones fastify and Node produce themselves (a bad percent escape, an over-long path, an
 * unknown route, a malformed request line, oversized headers), never echoing the request. Bodies
 * that are not UTF-8 or repeat a key are 400 INVALID_JSON; a POST/PUT/PATCH not declared as JSON
 * is 415, also when empty, so that a cross-site form cannot start a saga. None of them reaches a
 * saga, and the normal requests around them are served.
 */

const PROBLEM_KEYS = ['code', 'detail', 'requestId', 'status', 'title', 'type'];

async function assertProblem(res: Response, status: number, code: string, mustNotEcho?: string): Promise<void> {
  const text = await res.text();
  assert.equal(res.status, status, text);
  assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
  const body = JSON.parse(text) as Record<string, unknown>;
  assert.deepEqual(Object.keys(body).sort(), PROBLEM_KEYS);
  assert.equal(body['code'], code);
  assert.equal(body['status'], status);
  assert.equal(body['type'], `https://sagaway.dev/errors/${code}`);
  assert.equal(body['requestId'], res.headers.get('x-request-id'));
  assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
  if (mustNotEcho !== undefined) assert.ok(!text.includes(mustNotEcho), `the problem echoes "${mustNotEcho}": ${text}`);
}

/** A raw HTTP answer split into status line, lower-cased headers and the parsed body. */
function parseRaw(text: string): { status: string; headers: Record<string, string>; body: Record<string, unknown> } {
  const [head, body] = [text.slice(0, text.indexOf('\r\n\r\n')), text.slice(text.indexOf('\r\n\r\n') + 4)];
  const [status, ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const l of lines) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
  return { status: status!, headers, body: JSON.parse(body) as Record<string, unknown> };
}

const json = { 'content-type': 'application/json' };

test("fastify's and Node's own errors are problem+json with a requestId, and echo nothing", async () => {
  const svc = new ScriptedService((req) => ok({ got: req.input }));
  const { base, close } = await startGateway(svc);
  const port = Number(new URL(base).port);

  // A bad percent escape: fastify's router refuses it before any route or hook.
  await assertProblem(await fetch(base + '/api/request/pub/%zz'), 404, 'NOT_FOUND', '%zz');
  await assertProblem(await fetch(base + '/api/stream/pub/%zz%3Cscript%3E'), 404, 'NOT_FOUND', 'script');
  // A path parameter longer than the router takes.
  const long = 'L'.repeat(3000);
  await assertProblem(await fetch(base + '/api/status/' + long), 414, 'URI_TOO_LONG', long.slice(0, 50));
  // No route at all.
  await assertProblem(await fetch(base + '/no/such/route<b>'), 404, 'NOT_FOUND', '<b>');

  // A malformed request line: Node's clientError, answered on the raw socket.
  const garbage = parseRaw(await rawHttp(port, 'GARBAGE /<evil> HTTP/9\r\n\r\n'));
  assert.match(garbage.status, /^HTTP\/1\.1 400 /);
  assert.equal(garbage.headers['content-type'], 'application/problem+json');
  assert.deepEqual(Object.keys(garbage.body).sort(), PROBLEM_KEYS);
  assert.equal(garbage.body['code'], 'BAD_REQUEST');
  assert.equal(garbage.body['requestId'], garbage.headers['x-request-id']);
  assert.ok(!JSON.stringify(garbage).includes('evil'));

  // A header over Node's limit (16 KiB).
  const big = parseRaw(
    await rawHttp(port, `GET /api/request/x HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`),
  );
  assert.match(big.status, /^HTTP\/1\.1 431 /);
  assert.equal(big.body['code'], 'HEADERS_TOO_LARGE');
  assert.equal(big.body['requestId'], big.headers['x-request-id']);

  // A bad header line.
  const badHeader = parseRaw(await rawHttp(port, 'GET /api/request/x HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n'));
  assert.match(badHeader.status, /^HTTP\/1\.1 400 /);
  assert.equal(badHeader.body['code'], 'BAD_REQUEST');

  assert.equal(svc.calls.length, 0, 'none of them reached a saga');
  const fine = await fetch(base + '/api/request/fine?a=1');
  assert.equal(fine.status, 200);
  assert.deepEqual(await fine.json(), { got: { a: '1' } });
  await close();
});

test('invalid UTF-8 and repeated keys are 400 INVALID_JSON; keys that only look alike are accepted', async () => {
  const svc = new ScriptedService((req) => ok({ got: req.input }));
  const { base, close } = await startGateway(svc);
  const post = (body: string | Uint8Array) => fetch(base + '/api/request/x', { method: 'POST', headers: json, body });

  // {"a":"<0xff>"} and an overlong encoding of "/" (0xc0 0xaf).
  await assertProblem(
    await post(new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d])),
    400,
    'INVALID_JSON',
  );
  await assertProblem(
    await post(new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc0, 0xaf, 0x22, 0x7d])),
    400,
    'INVALID_JSON',
  );
  // Repeated keys: plain, nested, written differently (\u0061 is "a"), after strings holding colons and quotes.
  for (const body of [
    '{"role":"user","role":"admin"}',
    '{"a":{"b":1,"b":2}}',
    '{"a":1,"\\u0061":2}',
    '{"s":"x:\\"y\\":z","t":[{"k":1,"k":1}]}',
  ]) {
    await assertProblem(await post(body), 400, 'INVALID_JSON', 'admin');
  }
  assert.equal(svc.calls.length, 0, 'no refused body reached a saga');

  // Same keys in different objects, colons and escaped quotes and backslashes inside strings: accepted.
  const good = '{"a":{"k":"x:y"},"b":{"k":"\\\\"},"c":"\\":\\"","d":[{"k":1},{"k":2}],"e":"é ☃"}';
  const res = await post(good);
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { got: JSON.parse(good) });
  assert.equal(svc.calls.length, 1);
  await close();
});

test('POST, PUT and PATCH without a JSON content type are 415, also when empty; JSON ones are served', async () => {
  const svc = new ScriptedService((req) => ok({ method: req.method, got: req.input }));
  const { base, close } = await startGateway(svc);
  const url = base + '/api/request/orders';

  for (const method of ['POST', 'PUT', 'PATCH']) {
    // What a cross-site HTML form or a no-cors fetch can send without a preflight.
    await assertProblem(
      await fetch(url, { method, body: new URLSearchParams({ qty: '1' }) }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    await assertProblem(
      await fetch(url, { method, headers: { 'content-type': 'text/plain' }, body: '{"qty":1}' }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    const form = new FormData();
    form.set('qty', '1');
    await assertProblem(await fetch(url, { method, body: form }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    // No body and no content type (a bodyless form post, sendBeacon, a no-cors fetch).
    await assertProblem(await fetch(url, { method }), 415, 'UNSUPPORTED_MEDIA_TYPE');
  }
  // Also in the stream form.
  await assertProblem(await fetch(base + '/api/stream/orders', { method: 'POST' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
  assert.equal(svc.calls.length, 0, 'no saga was started');

  // JSON, with parameters and as a +json type, is served.
  const a = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: '{"qty":1}',
  });
  assert.equal(a.status, 200);
  assert.deepEqual(await a.json(), { method: 'POST', got: { qty: 1 } });
  const b = await fetch(url, {
    method: 'PATCH',
    headers: { 'content-type': 'application/merge-patch+json' },
    body: '{}',
  });
  assert.equal(b.status, 200);
  // GET and DELETE take no body and need no content type.
  assert.equal((await fetch(url, { method: 'DELETE' })).status, 200);
  assert.equal((await fetch(url)).status, 200);
  assert.equal(svc.calls.length, 4);
  await close();
});
