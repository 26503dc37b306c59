import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { silentLogger } from '../../src/core/logger.js';
import { createGateway, type Gateway } from '../../src/gateway/server.js';
import { startTestHost, type TestHost } from '../../src/testing/index.js';

/**
 * Found by the hostile re-test of issue 9 (item 11 only checks the nested saga's own `roles`):
 * a public saga that runs `saga.StartSaga` with a path (or id) from the request reaches a saga
 * whose API entry is NOT public (`/private`: any credential) or lists API roles (`/staff`:
 * roles [staff]) while the saga itself has no `roles`. Straight to the gateway, an anonymous
 * caller gets 401 for both; through the public saga it runs them. The protection a path has at
 * the gateway should also hold when a caller-chosen StartSaga reaches it.
 */

const sha = (key: string) => createHash('sha256').update(key).digest('hex');
const PRIVATE = 'private-answer-91c2';

const CONFIG = `
gateway:
  apis:
    - { path: /run, runner: web, methods: [GET], public: true }
    - { path: /private, runner: web, methods: [GET] }
    - { path: /staff, runner: web, methods: [GET], roles: [staff] }
  auth:
    apiKeys:
      - { name: viewer, sha256: "\${env:VIEWER_SHA}", roles: [viewer] }
runners:
  web:
    handlers: [saga]
    sagas:
      - id: run
        path: /run
        methods: [GET]
        steps:
          - { id: start, type: start, links: [{ to: nested }] }
          - id: nested
            type: event
            autoFail: true
            eventMeta: { handler: saga, action: StartSaga, version: 0, inject: true, inputElement: parameters, outputElement: $.out, parameters: { path: "%%target%%" } }
            links: [{ to: done }]
          - { id: done, type: success, outputElement: out }
      - id: private
        path: /private
        methods: [GET]
        steps:
          - { id: start, type: start, links: [{ to: t }] }
          - { id: t, type: transform, expression: '{ "answer": "${PRIVATE}" }', links: [{ to: done }] }
          - { id: done, type: success }
      - id: staff
        path: /staff
        methods: [GET]
        steps:
          - { id: start, type: start, links: [{ to: t }] }
          - { id: t, type: transform, expression: '{ "answer": "${PRIVATE}" }', links: [{ to: done }] }
          - { id: done, type: success }
`;

describe('saga.StartSaga with a caller-chosen path keeps the gateway protection of that path', () => {
  let h: TestHost;
  let gw: Gateway;
  before(async () => {
    h = await startTestHost(CONFIG, { env: { VIEWER_SHA: sha('viewer-key') } });
    gw = await createGateway({ settings: h.settings, service: h.host, log: silentLogger() });
  });
  after(async () => {
    await gw.close();
    await h.close();
  });

  async function call(url: string, headers: Record<string, string> = {}) {
    const res = await gw.app.inject({ method: 'GET', url, headers });
    return { status: res.statusCode, body: res.body };
  }

  test('control: straight to the gateway, anonymous is 401 on both, a viewer 403 on /staff', async () => {
    assert.equal((await call('/api/request/private')).status, 401);
    assert.equal((await call('/api/request/staff')).status, 401);
    assert.equal((await call('/api/request/staff', { 'x-api-key': 'viewer-key' })).status, 403);
  });

  test('through the public saga: the same refusals, and the private answer never leaves', async () => {
    const anon = await call('/api/request/run?target=/private');
    assert.ok(!anon.body.includes(PRIVATE), `anonymous read the private saga: ${anon.body}`);
    assert.equal(anon.status, 401, anon.body);
    const staff = await call('/api/request/run?target=/staff', { 'x-api-key': 'viewer-key' });
    assert.ok(!staff.body.includes(PRIVATE), `a viewer read the staff saga: ${staff.body}`);
    assert.equal(staff.status, 403, staff.body);
  });
});
