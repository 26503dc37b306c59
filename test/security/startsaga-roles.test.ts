import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { silentLogger } from '../../src/core/logger.js';
import { createGateway, type Gateway } from '../../src/gateway/server.js';
import { startTestHost, type TestHost } from '../../src/testing/index.js';

/**
 * Issue 9 item 11: saga.StartSaga checks the nested saga's `roles` against the caller, as the
 * gateway does for the saga it serves (401 for an anonymous caller, 403 without a role). The
 * public `/run` takes the nested saga's path (or id) from the request; the admin-only saga
 * writes a record and answers an internal report. A refused call must not run it at all.
 */

const sha = (key: string) => createHash('sha256').update(key).digest('hex');
const REPORT = 'internal-report-3f8a1c';

const CONFIG = `
gateway:
  apis:
    - { path: /run, runner: web, methods: [GET, POST], public: true }
    - { path: /runid, runner: web, public: true }
  auth:
    apiKeys:
      - { name: viewer, sha256: "\${env:VIEWER_SHA}", roles: [viewer] }
      - { name: boss, sha256: "\${env:BOSS_SHA}", roles: [admin] }
states:
  audit: { type: memory }
runners:
  web:
    handlers: [saga, read, write]
    sagas:
      - id: run
        path: /run
        methods: [GET, POST]
        steps:
          - { id: start, type: start, links: [{ to: nested }] }
          - id: nested
            type: event
            autoFail: true
            eventMeta: { handler: saga, action: StartSaga, version: 0, inject: true, inputElement: parameters, outputElement: $.out, parameters: { path: "%%target%%" } }
            links: [{ to: done }]
          - { id: done, type: success, outputElement: out }
      - id: runid
        path: /runid
        methods: [GET]
        steps:
          - { id: start, type: start, links: [{ to: nested }] }
          - id: nested
            type: event
            autoFail: true
            eventMeta: { handler: saga, action: StartSaga, version: 0, inject: true, inputElement: parameters, outputElement: $.out, parameters: { saga: "%%target%%" } }
            links: [{ to: done }]
          - { id: done, type: success, outputElement: out }
      - id: admin-only
        path: /admin/report
        methods: [GET, POST]
        roles: [admin]
        steps:
          - { id: start, type: start, links: [{ to: write }] }
          - id: write
            type: event
            autoFail: true
            eventMeta: { handler: write, action: Create, version: 0, domain: audit, outputElement: $.written }
            links: [{ to: answer }]
          - { id: answer, type: transform, expression: '{ "report": "${REPORT}" }', links: [{ to: done }] }
          - { id: done, type: success }
      - id: open
        path: /open
        methods: [GET, POST]
        steps:
          - { id: start, type: start, links: [{ to: shape }] }
          - { id: shape, type: transform, expression: '{ "open": true }', links: [{ to: done }] }
          - { id: done, type: success }
      - id: audit-list
        path: /audit-list
        methods: [GET]
        steps:
          - { id: start, type: start, links: [{ to: read }] }
          - id: read
            type: event
            autoFail: true
            eventMeta: { handler: read, action: GetList, version: 0, domain: audit, outputElement: $.page }
            links: [{ to: done }]
          - { id: done, type: success, outputElement: page }
`;

describe('saga.StartSaga checks the nested saga roles against the caller', () => {
  let h: TestHost;
  let gw: Gateway;
  before(async () => {
    h = await startTestHost(CONFIG, {
      env: { VIEWER_SHA: sha('viewer-key'), BOSS_SHA: sha('boss-key') },
    });
    gw = await createGateway({ settings: h.settings, service: h.host, log: silentLogger() });
  });
  after(async () => {
    await gw.close();
    await h.close();
  });

  /** How many records the admin-only saga wrote. */
  async function audit(): Promise<number> {
    const r = await h.run('/audit-list');
    assert.equal(r.outcome, 'SUCCESS', JSON.stringify(r));
    return (r.response as { list: unknown[] }).list.length;
  }

  async function call(url: string, headers: Record<string, string> = {}) {
    const res = await gw.app.inject({ method: 'GET', url, headers });
    return { status: res.statusCode, body: res.body, json: JSON.parse(res.body) as Record<string, unknown> };
  }

  for (const [name, url] of [
    ['by path', '/api/request/run?target=/admin/report'],
    ['by id', '/api/request/runid?target=admin-only'],
  ] as const) {
    test(`${name}: anonymous is 401, a caller without the role is 403, and the admin saga never ran`, async () => {
      const anon = await call(url);
      assert.equal(anon.status, 401, anon.body);
      assert.equal(anon.json['code'], 'UNAUTHORIZED');
      assert.ok(!anon.body.includes(REPORT), 'no report for an anonymous caller');

      const viewer = await call(url, { 'x-api-key': 'viewer-key' });
      assert.equal(viewer.status, 403, viewer.body);
      assert.equal(viewer.json['code'], 'FORBIDDEN');
      assert.ok(!viewer.body.includes(REPORT));
      assert.equal(await audit(), 0, 'the admin saga wrote nothing');
    });
  }

  test('control: an admin caller runs it through the same public saga, and anyone runs a saga without roles', async () => {
    const boss = await call('/api/request/run?target=/admin/report', { 'x-api-key': 'boss-key' });
    assert.equal(boss.status, 200, boss.body);
    assert.equal(boss.json['report'], REPORT);
    assert.equal(await audit(), 1);
    const open = await call('/api/request/run?target=/open');
    assert.equal(open.status, 200, open.body);
    assert.deepEqual(open.json, { open: true });
  });

  test('the engine alone (no gateway) refuses an anonymous or role-less user the same way', async () => {
    const anon = await h.run('/run', { input: { target: '/admin/report' } });
    assert.equal(anon.http, 401);
    assert.equal(anon.error?.code, 'UNAUTHORIZED');
    const viewer = await h.run('/run', {
      input: { target: '/admin/report' },
      user: { sub: 'v', roles: ['viewer'], claims: {}, anonymous: false },
    });
    assert.equal(viewer.http, 403);
    assert.equal(viewer.error?.code, 'FORBIDDEN');
    assert.equal(await audit(), 1, 'still only the admin call wrote');
  });
});
