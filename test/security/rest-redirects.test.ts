import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SagawayError } from '../../src/core/errors.js';
import { RestClient } from '../../src/handlers/rest/client.js';
import { buildRequest } from '../../src/handlers/rest/request.js';
import { startTestHost } from '../../src/testing/index.js';
import { httpSystem, startLoopback, type LoopbackServer } from '../handlers/rest-loopback.js';

/**
 * Issue 9 item 13 (a, b): with `followRedirects`, a redirect hop may not leave the system's base
 * URL: not another path of the same origin outside the base path, not another origin. Such a
 * hop fails SSRF_BLOCKED before it is resolved or connected, so the system's credentials
 * (`Authorization`, API keys) only ever reach the base URL. Hops under the base path keep them.
 * Real servers on loopback (the system allows private targets).
 */

const TOKEN = 'Bearer tok-5e9c0a7d13b2';
const never = new AbortController().signal;

async function outcome(p: Promise<unknown>): Promise<{ code: string; body?: unknown }> {
  try {
    return { code: 'OK', body: ((await p) as { body: unknown }).body };
  } catch (err) {
    assert.ok(err instanceof SagawayError, String(err));
    return { code: err.code };
  }
}

describe('rest redirects stay under the system base URL', () => {
  let server: LoopbackServer;
  let other: LoopbackServer;
  let client: RestClient;
  let system: ReturnType<typeof httpSystem>;
  before(async () => {
    server = await startLoopback();
    other = await startLoopback();
    system = httpSystem('api', `${server.origin}/api`, {
      allowPrivate: true,
      followRedirects: true,
      timeoutMs: 5_000,
      headers: { Authorization: TOKEN, 'X-Api-Key': 'key-77c1' },
    });
    client = new RestClient(system);
  });
  after(async () => {
    await client.close();
    await server.close();
    await other.close();
  });

  const follow = (to: string) =>
    outcome(client.send(buildRequest(system, { path: '/redirect', query: { to } }, undefined), never));

  test('a hop under the base path is followed and keeps the credentials', async () => {
    const r = await follow('/api/echo');
    assert.equal(r.code, 'OK');
    const seen = r.body as { url: string; headers: Record<string, string> };
    assert.equal(seen.url, '/api/echo');
    assert.equal(seen.headers['authorization'], TOKEN);
    assert.equal(seen.headers['x-api-key'], 'key-77c1');
    const rel = await follow('echo'); // relative to /api/redirect
    assert.equal((rel.body as { url: string }).url, '/api/echo');
  });

  test('a hop outside the base path (same origin) fails SSRF_BLOCKED and is never requested', async () => {
    const escapes = [
      '/admin/echo',
      '/apix/echo', // a prefix of the base path is not under it
      '../admin/echo',
      '/api/../admin/echo',
      '/api/%2e%2e/admin/echo',
      '/api/%2E%2E/admin/echo',
      '/',
      `${server.origin}/admin/echo`,
    ];
    for (const to of escapes) {
      const before = server.requests.length;
      const r = await follow(to);
      assert.equal(r.code, 'SSRF_BLOCKED', to);
      const seen = server.requests.slice(before);
      assert.equal(seen.length, 1, `${to}: only the first hop reached the server`);
      assert.ok(seen[0]?.url.startsWith('/api/redirect?'), to);
    }
    assert.ok(
      server.requests.every((r) => r.url.startsWith('/api/') || r.headers['authorization'] === undefined),
      'no credential ever reached a path outside the base',
    );
  });

  test('a hop to another origin fails SSRF_BLOCKED; that origin is never contacted', async () => {
    for (const to of [
      `${other.origin}/api/echo`,
      `http://localhost:${server.port}/api/echo`, // same server, another origin
      `//127.0.0.1:${other.port}/api/echo`,
    ]) {
      const r = await follow(to);
      assert.equal(r.code, 'SSRF_BLOCKED', to);
    }
    assert.equal(other.requests.length, 0);
    assert.equal(other.connections, 0);
  });

  test('through a saga: the step fails with SSRF_BLOCKED 403, and the response names no URL', async () => {
    const h = await startTestHost({
      systems: {
        api: {
          type: 'http',
          baseUrl: `${server.origin}/api`,
          allowPrivate: true,
          followRedirects: true,
          headers: { Authorization: TOKEN },
        },
      },
      runners: {
        web: {
          handlers: ['rest'],
          sagas: [
            {
              id: 'call',
              path: '/call',
              methods: ['GET'],
              steps: [
                { id: 'start', type: 'start', links: [{ to: 'e' }] },
                {
                  id: 'e',
                  type: 'event',
                  autoFail: true,
                  eventMeta: {
                    handler: 'rest',
                    action: 'CallRest',
                    version: 0,
                    domain: 'api',
                    outputElement: '$.out',
                    parameters: { path: '/redirect', query: { to: '/admin/echo' } },
                  },
                  links: [{ to: 'ok' }],
                },
                { id: 'ok', type: 'success', outputElement: 'out' },
              ],
            },
          ],
        },
      },
    } as never);
    try {
      const before = server.requests.length;
      const r = await h.run('/call');
      assert.equal(r.outcome, 'FAIL');
      assert.equal(r.http, 403);
      assert.equal(r.error?.code, 'SSRF_BLOCKED');
      const text = JSON.stringify(r);
      assert.ok(!text.includes('admin') && !text.includes('127.0.0.1') && !text.includes('tok-'), text);
      assert.equal(server.requests.length - before, 1);
    } finally {
      await h.close();
    }
  });
});
