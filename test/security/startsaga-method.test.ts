import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestHost, type TestHost } from '../../src/testing/index.js';

/**
 * Issue 9 item 12 (second bullet): saga.StartSaga by `path` without `method` looks the nested
 * saga up with the calling request's method, so a POST saga started from a POST saga is found
 * (it used to look for a GET saga). An explicit `method` still wins.
 */

const CONFIG = `
runners:
  web:
    handlers: [saga]
    sagas:
      - id: outer
        path: /outer
        methods: [GET, POST, DELETE]
        steps:
          - { id: start, type: start, links: [{ to: nested }] }
          - id: nested
            type: event
            autoFail: true
            eventMeta: { handler: saga, action: StartSaga, version: 0, inputElement: parameters, outputElement: $.out, parameters: { path: /target/7 } }
            links: [{ to: done }]
          - { id: done, type: success, outputElement: out }
      - id: explicit
        path: /explicit
        methods: [POST]
        steps:
          - { id: start, type: start, links: [{ to: nested }] }
          - id: nested
            type: event
            autoFail: true
            eventMeta: { handler: saga, action: StartSaga, version: 0, inputElement: parameters, outputElement: $.out, parameters: { path: /target/7, method: get } }
            links: [{ to: done }]
          - { id: done, type: success, outputElement: out }
      - id: target-get
        path: /target/:id
        methods: [GET]
        steps:
          - { id: start, type: start, links: [{ to: shape }] }
          - { id: shape, type: transform, expression: '{ "ran": "target-get" }', links: [{ to: done }] }
          - { id: done, type: success }
      - id: target-post
        path: /target/:id
        methods: [POST]
        steps:
          - { id: start, type: start, links: [{ to: shape }] }
          - { id: shape, type: transform, expression: '{ "ran": "target-post", "id": parameters.id, "qty": parameters.qty }', links: [{ to: done }] }
          - { id: done, type: success }
`;

describe('saga.StartSaga by path uses the calling request method', () => {
  let h: TestHost;
  before(async () => {
    h = await startTestHost(CONFIG);
  });
  after(() => h.close());

  test('POST finds the POST saga, with the input and the path parameters', async () => {
    const r = await h.run('/outer', { method: 'POST', input: { qty: 3 } });
    assert.equal(r.outcome, 'SUCCESS', JSON.stringify(r));
    assert.deepEqual(r.response, { ran: 'target-post', id: '7', qty: 3 });
  });

  test('GET finds the GET saga', async () => {
    const r = await h.run('/outer', { method: 'GET' });
    assert.deepEqual(r.response, { ran: 'target-get' });
  });

  test('a method no nested saga serves fails NOT_FOUND (not a saga of another method)', async () => {
    const r = await h.run('/outer', { method: 'DELETE' });
    assert.equal(r.outcome, 'FAIL');
    assert.equal(r.error?.code, 'NOT_FOUND');
  });

  test('an explicit method wins over the calling one', async () => {
    const r = await h.run('/explicit', { method: 'POST', input: { qty: 1 } });
    assert.deepEqual(r.response, { ran: 'target-get' });
  });
});
