import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { EventSource } from 'eventsource';
import type { SagaDefinition, Settings } from '../../src/config/settings.js';
import { silentLogger } from '../../src/core/logger.js';
import { createGateway } from '../../src/gateway/server.js';
import { runnerSettingsFor } from '../../src/testing/settings.js';
import { feedService, settingsWith } from '../gateway/harness.js';

/**
 * Issue 9, item 12 (first bullet): `GET /api/stream/<path>` with no saga for the path is a `404`
 * problem+json before the stream opens (like 401, 403 and 405), so an EventSource stops instead
 * of retrying an `event: error` forever. The same for a method the saga does not allow and for
 * the saga's own roles. Nothing is run for them; the known path streams as before.
 */

const saga = (id: string, path: string, extra: Partial<SagaDefinition> = {}): SagaDefinition => ({
  id,
  path,
  steps: [
    { id: 'start', type: 'start', links: [{ to: 'ok' }] },
    { id: 'ok', type: 'success' },
  ],
  source: { file: '/tmp/x.yaml', at: [] },
  ...extra,
});

const sagas = [
  saga('feed', '/feed'),
  saga('item', '/items/:id', { methods: ['GET', 'PUT'] }),
  saga('admin', '/admin', { roles: ['admin'] }),
];

async function start() {
  const sha = createHash('sha256').update('viewer-key').digest('hex');
  const settings: Settings = {
    ...settingsWith({
      stream: { minWaitMs: 10, defaultWaitMs: 10 },
      auth: { apiKeys: [{ name: 'viewer', sha256: sha, roles: ['viewer'] }] },
    }),
    runners: { main: runnerSettingsFor({ deployment: 'main', sagas }) },
  };
  const svc = feedService(3, 2);
  const gw = await createGateway({ settings, service: svc, log: silentLogger() });
  const { port } = await gw.listen(0, '127.0.0.1');
  return { svc, gw, base: `http://127.0.0.1:${port}` };
}

async function expectProblem(res: Response, status: number, code: string): Promise<void> {
  assert.equal(res.status, status);
  assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
  const body = (await res.json()) as Record<string, unknown>;
  assert.equal(body['code'], code);
  assert.equal(body['requestId'], res.headers.get('x-request-id'));
}

test('unknown stream paths, methods and missing roles are refused before the stream opens', async () => {
  const { svc, gw, base } = await start();
  try {
    await expectProblem(await fetch(base + '/api/stream/nope'), 404, 'NOT_FOUND');
    await expectProblem(await fetch(base + '/api/stream/items'), 404, 'NOT_FOUND');
    assert.equal((await fetch(base + '/api/stream/nope', { method: 'HEAD' })).status, 404);
    const post = await fetch(base + '/api/stream/items/7', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(post.headers.get('allow'), 'GET, PUT');
    await expectProblem(post, 405, 'METHOD_NOT_ALLOWED');
    const anonymous = await fetch(base + '/api/stream/admin');
    assert.match(anonymous.headers.get('www-authenticate') ?? '', /^Bearer/);
    await expectProblem(anonymous, 401, 'UNAUTHORIZED');
    await expectProblem(
      await fetch(base + '/api/stream/admin', { headers: { 'x-api-key': 'viewer-key' } }),
      403,
      'FORBIDDEN',
    );
    assert.equal(svc.calls.length, 0, 'nothing was run for them');

    // An EventSource on an unknown path fails once and stays closed: no reconnect loop.
    const es = new EventSource(base + '/api/stream/nope');
    let errors = 0;
    let opened = false;
    es.onopen = () => (opened = true);
    await new Promise<void>((resolve) => {
      es.onerror = () => {
        errors++;
        resolve();
      };
    });
    // CLOSED at its first error (a CONNECTING one would retry): an EventSource that is closed never reconnects.
    assert.equal(es.readyState, EventSource.CLOSED);
    assert.equal(opened, false);
    assert.equal(errors, 1);
    es.close();

    // The known paths stream as before.
    const ok = await fetch(base + '/api/stream/feed');
    assert.equal(ok.status, 200);
    const text = await ok.text();
    assert.equal((text.match(/^data: \{"n":/gm) ?? []).length, 3);
    assert.match(text, /event: end/);
    const item = await fetch(base + '/api/stream/items/7');
    assert.equal(item.status, 200);
    await item.text();
    assert.deepEqual(
      svc.calls.map((c) => c.req.path),
      ['/feed', '/feed', '/items/7', '/items/7'],
    );
  } finally {
    await gw.close();
  }
});
