import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { silentLogger } from '../../src/core/logger.js';
import { createGateway, type Gateway } from '../../src/gateway/server.js';
import { startTestHost, type TestHost } from '../../src/testing/index.js';

/**
 * Found by the hostile re-test of issue 9 (item 9: never an echo of hostile input): the shipped
 * todo example answered `GET /api/request/todos/<img src=x onerror=alert(1)>` with
 * `"detail":"record \"<img src=x onerror=alert(1)>\" not found"`. The built-in handlers and the
 * states put the record id — a path parameter or body field, i.e. the caller's text — into the
 * detail of RECORD_NOT_FOUND, RECORD_EXISTS (memory, SQLite, PostgreSQL), a missing task and a
 * missing action record. The problem keeps its code and status; its detail names no id.
 */

const HOSTILE = '<img src=x onerror=alert(1)>';

const step = (handler: string, action: string, extra = '') =>
  `{ id: e, type: event, autoFail: true, eventMeta: { handler: ${handler}, action: ${action}, version: 0, domain: things, inputElement: parameters, outputElement: $.out${extra} }, links: [{ to: ok }] }`;

const saga = (id: string, path: string, method: string, event: string) => `
      - id: ${id}
        path: ${path}
        methods: [${method}]
        steps:
          - { id: start, type: start, links: [{ to: e }] }
          - ${event}
          - { id: ok, type: success, outputElement: out }`;

const CONFIG = `
gateway:
  apis: [{ path: /things, runner: web, public: true }, { path: /act, runner: web, public: true }, { path: /tasks, runner: web, public: true }]
states:
  things: { type: sqlite, file: ":memory:" }
  mem: { type: memory }
  actions: { type: memory }
runners:
  web:
    handlers: [read, write, action, task]
    sagas:${saga('get', '/things/:id', 'GET', step('read', 'Get'))}${saga('create', '/things', 'POST', step('write', 'Create'))}${saga(
      'patch',
      '/things/:id',
      'PATCH',
      step('write', 'Update'),
    )}${saga('memcreate', '/things/mem', 'PUT', step('write', 'Create').replace('domain: things', 'domain: mem'))}${saga(
      'act',
      '/act',
      'POST',
      '{ id: e, type: event, autoFail: true, eventMeta: { handler: action, action: TakeAction, version: 0, inject: true, inputElement: parameters, outputElement: $.out, parameters: { action: "%%which%%" } }, links: [{ to: ok }] }',
    )}${saga('task', '/tasks/:taskId', 'GET', step('task', 'GetTask', '').replace('domain: things', 'domain: mem'))}
`;

describe('a record id from the request is never echoed in the problem', () => {
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

  async function problem(method: string, url: string, code: string, body?: unknown) {
    const res = await gw.app.inject({
      method: method as 'GET',
      url,
      ...(body !== undefined ? { headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) } : {}),
    });
    assert.match(String(res.headers['content-type']), /^application\/problem\+json/, res.body);
    assert.equal(JSON.parse(res.body)['code'], code, res.body);
    assert.ok(
      !res.body.includes('onerror') && !res.body.includes('<img'),
      `${method} ${url} echoes the id: ${res.body}`,
    );
    return res;
  }

  const enc = encodeURIComponent(HOSTILE);
  test('read.Get of a missing id (the todo example): 404 RECORD_NOT_FOUND', async () => {
    assert.equal((await problem('GET', `/api/request/things/${enc}`, 'RECORD_NOT_FOUND')).statusCode, 404);
  });
  test('write.Update of a missing id: 404 RECORD_NOT_FOUND', async () => {
    assert.equal((await problem('PATCH', `/api/request/things/${enc}`, 'RECORD_NOT_FOUND', { a: 1 })).statusCode, 404);
  });
  test('write.Create of a taken id, SQLite and memory: 409 RECORD_EXISTS', async () => {
    for (const [method, url] of [
      ['POST', '/api/request/things'],
      ['PUT', '/api/request/things/mem'],
    ] as const) {
      const first = await gw.app.inject({
        method,
        url,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ id: HOSTILE, v: 1 }),
      });
      assert.equal(first.statusCode, 200, first.body);
      assert.equal((await problem(method, url, 'RECORD_EXISTS', { id: HOSTILE, v: 2 })).statusCode, 409);
    }
  });
  test('action.TakeAction of a missing record named by the caller', async () => {
    await problem('POST', '/api/request/act', 'RECORD_NOT_FOUND', { which: HOSTILE });
  });
  test('task.GetTask of a missing task', async () => {
    // (another id than the records the create test wrote into the same memory state)
    await problem('GET', `/api/request/tasks/${enc}${enc}`, 'RECORD_NOT_FOUND');
  });
});
