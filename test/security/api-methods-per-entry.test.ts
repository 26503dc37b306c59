import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config/load.js';
import { ConfigError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/logger.js';
import { routeReport, routeWarnings } from '../../src/gateway/apis/route-check.js';
import { buildModel } from '../../src/gateway/console/model.js';
import { formatRoutes } from '../../src/cli/routes.js';
import { createGateway, type Gateway } from '../../src/gateway/server.js';
import { startTestHost, type TestHost } from '../../src/testing/index.js';

/**
 * Auth per method on one path (issue 19, item 5). A first saga walk wrote two entries for one
 * path, GET public and POST for editors: the second was silently ignored (POST was 405, or, with
 * the advice `validate` gave, public). Now each method has its own entry and auth, and entries
 * whose methods overlap are refused at load.
 */

const sha = (key: string) => createHash('sha256').update(key).digest('hex');

const sagas = `
runners:
  cms:
    sagas:
      - id: list-articles
        path: /articles
        methods: [GET]
        steps:
          - { id: start, type: start, links: [{ to: t }] }
          - { id: t, type: transform, expression: '{ "list": [] }', links: [{ to: done }] }
          - { id: done, type: success }
      - id: create-article
        path: /articles
        methods: [POST]
        roles: [author]
        steps:
          - { id: start, type: start, links: [{ to: t }] }
          - { id: t, type: transform, expression: '{ "created": true }', links: [{ to: done }] }
          - { id: done, type: success, http: 201 }
`;

const CONFIG = `
gateway:
  apis:
    - { path: /articles, runner: cms, methods: [GET], public: true }
    - { path: /articles, runner: cms, methods: [POST], roles: [editor] }
  auth:
    apiKeys:
      - { name: editor, sha256: "\${env:EDITOR_SHA}", roles: [editor, author] }
      - { name: viewer, sha256: "\${env:VIEWER_SHA}", roles: [viewer, author] }
${sagas}`;

describe('two gateway.apis entries on one path with disjoint methods', () => {
  let h: TestHost;
  let gw: Gateway;
  before(async () => {
    h = await startTestHost(CONFIG, { env: { EDITOR_SHA: sha('editor-key'), VIEWER_SHA: sha('viewer-key') } });
    gw = await createGateway({ settings: h.settings, service: h.host, log: silentLogger() });
  });
  after(async () => {
    await gw.close();
    await h.close();
  });

  const call = async (method: 'GET' | 'POST' | 'DELETE', key?: string) => {
    const res = await gw.app.inject({
      method,
      url: '/api/request/articles',
      headers: {
        ...(key ? { 'x-api-key': key } : {}),
        ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
      },
      ...(method === 'POST' ? { payload: '{}' } : {}),
    });
    return { status: res.statusCode, allow: res.headers['allow'] };
  };

  test('GET is public, POST needs the editor role: both enforced', async () => {
    assert.equal((await call('GET')).status, 200, 'anonymous GET');
    assert.equal((await call('POST')).status, 401, 'anonymous POST');
    assert.equal((await call('POST', 'viewer-key')).status, 403, 'POST without the editor role');
    assert.equal((await call('POST', 'editor-key')).status, 201, 'POST by an editor');
  });

  test('a method no entry serves is 405, Allow listing every entry of the path', async () => {
    const r = await call('DELETE', 'editor-key');
    assert.equal(r.status, 405);
    assert.deepEqual(String(r.allow).split(', ').sort(), ['GET', 'HEAD', 'POST']);
  });

  test('no warning; routes list each saga under its entry, with its own roles and the URLs to call', () => {
    assert.deepEqual(routeWarnings(h.settings), []);
    const rows = formatRoutes(h.settings, routeReport(h.settings))
      .trim()
      .split('\n')
      .map((l) => l.split(/\s{2,}/));
    assert.deepEqual(rows[1], [
      '/articles',
      'GET',
      'public',
      'cms',
      'list-articles',
      '/articles',
      'GET',
      '-',
      '/api/request/articles /api/stream/articles',
    ]);
    assert.deepEqual(rows[2], [
      '/articles',
      'POST',
      'roles editor',
      'cms',
      'create-article',
      '/articles',
      'POST',
      'author',
      '/api/request/articles /api/stream/articles',
    ]);
  });

  test("the console's model shows each saga's entries and its own roles", () => {
    const create = buildModel(h.settings).sagas.find((s) => s.id === 'create-article')!;
    assert.deepEqual(create.roles, ['author']);
    assert.deepEqual(create.apis, [
      { path: '/articles', methods: ['POST'], auth: { public: false, roles: ['editor'] } },
    ]);
  });
});

describe('entries on one path whose methods overlap', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sagaway-api-overlap-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const load = async (apis: string) => {
    const file = join(dir, `c${Math.random().toString(36).slice(2)}.yaml`);
    writeFileSync(file, `gateway:\n  apis:\n${apis}${sagas}`);
    try {
      await loadConfig(file);
      return undefined;
    } catch (e) {
      assert.ok(e instanceof ConfigError, String(e));
      return e.issues;
    }
  };

  test('are a located load error with a stable code', async () => {
    const issues = await load(
      '    - { path: /articles, runner: cms, methods: [GET], public: true }\n' +
        '    - { path: /articles/, runner: cms, methods: [POST, HEAD], roles: [editor] }\n',
    );
    assert.equal(issues?.length, 1);
    assert.equal(issues[0]!.path, 'gateway.apis[1].methods');
    assert.equal(issues[0]!.line, 4);
    assert.match(issues[0]!.message, /^API_METHODS_OVERLAP: gateway\.apis\[0\] already serves HEAD on \/articles/);
  });

  test('an entry without methods overlaps every other on its path', async () => {
    const issues = await load(
      '    - { path: /articles, runner: cms, public: true }\n' +
        '    - { path: /articles, runner: cms, methods: [POST], roles: [editor] }\n',
    );
    assert.match(issues?.[0]?.message ?? '', /^API_METHODS_OVERLAP: gateway\.apis\[0\] already serves POST/);
  });

  test('the advice for a write that a public entry does not allow is an entry of its own, never widening it', async () => {
    const file = join(dir, 'advice.yaml');
    writeFileSync(
      file,
      `gateway:\n  apis:\n    - { path: /articles, runner: cms, methods: [GET], public: true }\n${sagas}`,
    );
    const { settings } = await loadConfig(file);
    const warnings = routeWarnings(settings).map((w) => w.message);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /saga "create-article"/);
    assert.match(
      warnings[0]!,
      /add an entry of their own to gateway\.apis, \{ path: \/articles, runner: cms, methods: \[POST\] \}/,
    );
    assert.doesNotMatch(warnings[0]!, /add them to gateway\.apis\[0\]\.methods/);
  });
});
