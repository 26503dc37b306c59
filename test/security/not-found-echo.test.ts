import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { silentLogger } from '../../src/core/logger.js';
import { createGateway, type Gateway } from '../../src/gateway/server.js';
import { startTestHost, type TestHost } from '../../src/testing/index.js';

/**
 * Found by the hostile re-test of issue 9 (item 9: never an echo of hostile input): a path under
 * an API prefix that no saga serves (`/api/request/web/<img ...>.html`) was answered by the
 * runner's `no saga serves GET /web/<img ...>`, and `saga.StartSaga` with a caller-chosen path
 * that matches nothing by `no saga /x<b>hi on runner web`. Both put the caller's text into the
 * problem's `detail`. The detail must name nothing the caller sent; the problem stays the same.
 */

const HOSTILE = '<img src=x onerror=alert(1)>';

const CONFIG = `
gateway:
  apis:
    - { path: /web, runner: web, methods: [GET], public: true }
runners:
  web:
    handlers: [saga]
    sagas:
      - id: run
        path: /web/run
        methods: [GET]
        steps:
          - { id: start, type: start, links: [{ to: nested }] }
          - id: nested
            type: event
            autoFail: true
            eventMeta: { handler: saga, action: StartSaga, version: 0, inject: true, inputElement: parameters, outputElement: $.out, parameters: { path: "%%target%%" } }
            links: [{ to: done }]
          - { id: done, type: success, outputElement: out }
`;

describe('a path that no saga serves is never echoed in the problem', () => {
  let h: TestHost;
  let gw: Gateway;
  before(async () => {
    h = await startTestHost(CONFIG);
    gw = await createGateway({ settings: h.settings, service: h.host, log: silentLogger() });
  });
  after(async () => {
    await gw.close();
    await h.close();
  });

  async function problem(url: string, status: number): Promise<Record<string, unknown>> {
    const res = await gw.app.inject({ method: 'GET', url });
    assert.equal(res.statusCode, status, res.body);
    assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
    assert.ok(!res.body.includes('onerror') && !res.body.includes('<img'), `the problem echoes the path: ${res.body}`);
    const body = JSON.parse(res.body) as Record<string, unknown>;
    assert.equal(body['code'], 'NOT_FOUND');
    return body;
  }

  test('an unserved path under an API prefix: 404 NOT_FOUND without the path', async () => {
    for (const suffix of ['', '.html', '.json', '.xml']) {
      await problem(`/api/request/web/${encodeURIComponent(HOSTILE)}${suffix}`, 404);
    }
  });

  test('saga.StartSaga with a caller path that matches nothing: NOT_FOUND without the path', async () => {
    await problem(`/api/request/web/run?target=${encodeURIComponent('/x' + HOSTILE)}`, 500);
  });

  test('control: the saga is served', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/api/request/web/run?target=/web/run' });
    // It starts itself until the nesting bound: served by the runner, refused by its own limit.
    assert.equal(JSON.parse(res.body)['code'], 'STEP_LIMIT_EXCEEDED', res.body);
  });
});
