import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { loadConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/core/logger.js';
import { UNMAPPED_SAGA_DETAIL } from '../../src/gateway/apis/api-map.js';
import { createGateway } from '../../src/gateway/server.js';
import { BUILTIN_HANDLERS } from '../../src/handlers/index.js';
import { Host } from '../../src/runner/host.js';
import { createState } from '../../src/states/index.js';
import { createCluster } from '../../src/systems/index.js';
import { sagaway, startSagaway } from './spawn.js';

/**
 * The silent traps of a first project (issue 15), each now loud: an API that answers 401 to
 * everyone, a saga that the gateway cannot reach while `sagaway run` finds it, and its 404.
 */

const dir = mkdtempSync(join(tmpdir(), 'sagaway-traps-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const SAGA = (id: string, path: string) => `
      - id: ${id}
        path: ${path}
        steps:
          - { id: start, type: start, links: [{ to: done }] }
          - { id: done, type: success }`;

/** /notes is not public and nothing can authenticate; /orders has no API; /todos is fine. */
const CONFIG = `gateway:
  apis:
    - { path: /notes, runner: app }
    - { path: /todos, runner: app, public: true }
runners:
  app:
    sagas:${SAGA('notes', '/notes')}${SAGA('todos', '/todos')}${SAGA('orders', '/orders/:id')}
`;
const file = join(dir, 'sagaway.yaml');
writeFileSync(file, CONFIG);

const CLOSED =
  /API \/notes is neither public nor covered by auth: no gateway\.auth is configured, so every request to it is answered 401/;
const UNMAPPED =
  /saga "orders" \(\/orders\/:id\) of runner "app" is not served by the gateway \(no gateway\.apis entry covers its path\): only `sagaway run` reaches it; add \{ path: \/orders, runner: app \} to gateway\.apis/;

describe('trap: an API that is neither public nor covered by auth', () => {
  test('validate warns, naming the API and its line, and still exits 0', () => {
    const r = sagaway(['validate', '--config', file]);
    assert.equal(r.status, 0, r.stderr);
    const line = r.stdout.split('\n').find((l) => CLOSED.test(l));
    assert.ok(line, r.stdout);
    assert.match(line, /sagaway\.yaml:3:\d+ gateway\.apis\[0\]: .*\(warning\)$/);
    assert.ok(!r.stdout.includes('API /todos'), 'the public API is not named');
  });
  test('no warning once gateway.auth exists', () => {
    const withAuth = join(dir, 'with-auth.yaml');
    writeFileSync(
      withAuth,
      CONFIG.replace('gateway:\n', 'gateway:\n  auth: { jwt: { secret: s3cret-s3cret-s3cret-s3cret-s3cret } }\n'),
    );
    const r = sagaway(['validate', '--config', withAuth]);
    assert.equal(r.status, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /neither public/);
  });
});

describe('trap: a saga that no API maps', () => {
  test('validate warns, naming the saga and the entry to add', () => {
    const r = sagaway(['validate', '--config', file]);
    assert.match(r.stdout, UNMAPPED);
    assert.match(r.stdout, /runners\.app\.sagas\[2\]\.path: /);
  });
  test('a saga under an API of another runner is named too', () => {
    const other = join(dir, 'other-runner.yaml');
    writeFileSync(
      other,
      `gateway:\n  apis: [{ path: /, runner: a, public: true }]\nrunners:\n  a:\n    sagas:${SAGA('x', '/x')}\n  b:\n    sagas:${SAGA('y', '/y')}\n`,
    );
    const r = sagaway(['validate', '--config', other]);
    assert.match(
      r.stdout,
      /saga "y" \(\/y\) of runner "b" is not served by the gateway \(its path falls under API \/, which maps to runner "a"\)/,
    );
  });
  test('start logs both warnings before it serves', async () => {
    const s = await startSagaway(['--config', file, '--port', '0']);
    try {
      const warnings = s.lines.filter((l) => l['level'] === 40).map((l) => String(l['msg']));
      assert.ok(
        warnings.some((w) => CLOSED.test(w)),
        JSON.stringify(warnings),
      );
      assert.ok(
        warnings.some((w) => UNMAPPED.test(w)),
        JSON.stringify(warnings),
      );
      // And the 404 of the unmapped saga says why, over the real socket.
      const res = await fetch(`http://127.0.0.1:${s.port}/api/request/orders/7`);
      assert.equal(res.status, 404);
      const body = (await res.json()) as { code: string; detail: string };
      assert.equal(body.code, 'NOT_FOUND');
      assert.equal(body.detail, UNMAPPED_SAGA_DETAIL);
      // The closed API answers 401, as the warning said.
      assert.equal((await fetch(`http://127.0.0.1:${s.port}/api/request/notes`)).status, 401);
    } finally {
      await s.stop();
    }
  });
});

describe('trap: the 404 of a path that only a saga knows', () => {
  test('the detail says a saga has the path; an unknown path keeps the plain detail', async () => {
    const { settings } = await loadConfig(file);
    const log = silentLogger();
    const host = await Host.start({ settings, log, builtins: BUILTIN_HANDLERS, createState, createCluster });
    const gateway = await createGateway({ settings, service: host, log });
    try {
      for (const form of ['request', 'stream']) {
        const r = await gateway.app.inject({ url: `/api/${form}/orders/42` });
        assert.equal(r.statusCode, 404);
        assert.match(String(r.headers['content-type']), /^application\/problem\+json/);
        assert.equal(r.json().detail, UNMAPPED_SAGA_DETAIL);
        assert.ok(!r.body.includes('app'), 'no runner name in the answer');
      }
      const plain = await gateway.app.inject({ url: '/api/request/nothing/here' });
      assert.equal(plain.statusCode, 404);
      assert.equal(plain.json().detail, 'no API serves this path');
      // The mapped saga is served as before.
      assert.equal((await gateway.app.inject({ url: '/api/request/todos' })).statusCode, 200);
    } finally {
      await gateway.close();
      await host.close();
    }
  });
});
