import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, test } from 'node:test';
import { PROBE_HANDLER } from '../../src/testing/probe-handler.js';

const CLI = resolve('dist', 'src', 'cli', 'main.js');
const dir = mkdtempSync(join(tmpdir(), 'sagaway-run-'));
const CANARY = `canary-${process.pid}-${Date.now()}`;

writeFileSync(join(dir, 'probe.mjs'), PROBE_HANDLER);
writeFileSync(
  join(dir, 'sagaway.yaml'),
  `
secrets: { from: env, prefix: RUNTEST_SECRET_ }
runners:
  r:
    handlers: [./probe.mjs]
    sagas:
      - id: echo
        path: /echo/:id
        methods: [GET, POST]
        steps:
          - { id: start, type: start, links: [{ to: e }] }
          - { id: e, type: event, eventMeta: { handler: probe, action: Echo, version: 0, inputElement: parameters, outputElement: $.got }, links: [{ to: ok }] }
          - { id: ok, type: success, outputElement: got }
      - id: ack
        path: /ack
        steps:
          - { id: start, type: start, links: [{ to: e }] }
          - { id: e, type: event, eventMeta: { handler: probe, action: Ack, version: 0 }, links: [{ to: ok }] }
          - { id: ok, type: success }
      - id: leak
        path: /leak
        steps:
          - { id: start, type: start, links: [{ to: e }] }
          - { id: e, type: event, eventMeta: { handler: probe, action: Leak, version: 0, inject: true, parameters: { header: "Bearer #{{TOKEN}}" } }, links: [{ to: ok, when: [SUCCESS] }] }
          - { id: ok, type: success }
      - id: typed
        path: /typed
        methods: [POST]
        inputSchema: { type: object, properties: { extra: { type: boolean } } }
        outputSchema:
          type: object
          required: [total]
          properties: { total: { type: integer } }
        steps:
          - { id: start, type: start, links: [{ to: e }] }
          - { id: e, type: event, eventMeta: { handler: probe, action: Echo, version: 0, inputElement: parameters, outputElement: $.got }, links: [{ to: ok }] }
          - { id: ok, type: success, outputElement: got }
      - id: slow
        path: /slow
        timeout: 100ms
        steps:
          - { id: start, type: start, links: [{ to: e }] }
          - { id: e, type: event, eventMeta: { handler: probe, action: Slow, version: 0, parameters: { ms: 5000 } }, links: [{ to: ok }] }
          - { id: ok, type: success }
`,
);
after(() => rmSync(dir, { recursive: true, force: true }));

function run(...args: string[]) {
  const r = spawnSync(process.execPath, [CLI, 'run', '--config', join(dir, 'sagaway.yaml'), ...args], {
    encoding: 'utf8',
    env: { ...process.env, RUNTEST_SECRET_TOKEN: CANARY, LOG_LEVEL: 'debug' },
  });
  return { ...r, json: r.stdout.trim() ? JSON.parse(r.stdout) : undefined };
}

describe('sagaway run', () => {
  test('SUCCESS: one JSON object on stdout, exit 0; query and path parameters are the input', () => {
    const r = run('/echo/42?tag=a&tag=b');
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(r.json, { outcome: 'SUCCESS', http: 200, response: { tag: ['a', 'b'], id: '42' } });
  });
  test('--method and --data give the body', () => {
    const r = run('--method', 'POST', '--data', '{"qty":3}', '/echo/7');
    assert.deepEqual(r.json.response, { qty: 3, id: '7' });
  });
  test('ACK is exit 0 with http 202', () => {
    const r = run('/ack');
    assert.equal(r.status, 0);
    assert.equal(r.json.outcome, 'ACK');
    assert.equal(r.json.http, 202);
  });
  test('FAIL is exit 1 with the error; the injected secret is in neither stdout nor the logs', () => {
    const r = run('/leak');
    assert.equal(r.status, 1);
    assert.equal(r.json.outcome, 'FAIL');
    assert.equal(r.json.error.code, 'UNHANDLED_STEP_FAILURE');
    assert.match(r.stderr, /REDACTED/, 'the action did log');
    assert.ok(!r.stdout.includes(CANARY) && !r.stderr.includes(CANARY), 'canary leaked');
  });
  test("a response off the saga's outputSchema: exit 1, INVALID_OUTPUT with pointers, the response still printed", () => {
    const r = run('--method', 'POST', '--data', '{"total":"12","extra":true}', '/typed');
    assert.equal(r.status, 1, r.stderr);
    assert.equal(r.json.outcome, 'SUCCESS');
    assert.deepEqual(r.json.response, { total: '12', extra: true });
    assert.equal(r.json.error.code, 'INVALID_OUTPUT');
    assert.match(r.json.error.message, /saga "typed"/);
    assert.deepEqual(r.json.error.errors, [{ pointer: '/total', message: 'must be integer' }]);
    const refused = run('--method', 'POST', '--data', '{"total":1,"extra":"no"}', '/typed');
    assert.equal(refused.status, 1);
    assert.deepEqual(refused.json, {
      outcome: 'FAIL',
      http: 400,
      error: {
        code: 'INVALID_INPUT',
        message: 'the input does not match the inputSchema of saga "typed"',
        http: 400,
        errors: [{ pointer: '/extra', message: 'must be boolean' }],
      },
    });
    const good = run('--method', 'POST', '--data', '{"total":12}', '/typed');
    assert.equal(good.status, 0, good.stdout);
    assert.equal(good.json.error, undefined);
  });
  test('TIMEOUT is exit 1 with http 504', () => {
    const r = run('/slow');
    assert.equal(r.status, 1);
    assert.equal(r.json.outcome, 'TIMEOUT');
    assert.equal(r.json.http, 504);
  });
  test('bad --data is exit 2; a configuration error is exit 2 with located lines', () => {
    assert.equal(run('--method', 'POST', '--data', '{oops', '/echo/1').status, 2);
    const r = spawnSync(process.execPath, [CLI, 'run', '--config', 'test/fixtures/broken/unknown-link.yaml', '/s'], {
      encoding: 'utf8',
    });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /unknown-link\.yaml:\d+:\d+ /);
  });
});
