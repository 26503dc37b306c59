import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { after, describe, test } from 'node:test';
import { loadConfig } from '../../src/config/load.js';
import { COMMAND_HELP } from '../../src/cli/help.js';
import { skipOrFail } from '../require-services.js';
import { sagaway, startSagaway } from './spawn.js';

/** The command line of issue 15: help per command, --version, --host, run as a user, routes, init. */

const dir = mkdtempSync(join(tmpdir(), 'sagaway-commands-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const file = join(dir, 'sagaway.yaml');
writeFileSync(
  file,
  `gateway:
  apis: [{ path: /me, runner: app, methods: [GET, POST], public: true }, { path: /broken, runner: app, public: true }]
runners:
  app:
    sagas:
      - id: me
        path: /me
        methods: [GET, POST]
        steps:
          - { id: start, type: start, links: [{ to: who }] }
          - { id: who, type: transform, expression: '{ "sub": $user.sub, "roles": $user.roles, "body": parameters }', links: [{ to: done }] }
          - { id: done, type: success }
      - id: broken
        path: /broken
        steps:
          - { id: start, type: start, links: [{ to: boom }] }
          - { id: boom, type: transform, expression: '$error("boom")', links: [{ to: done, when: [SUCCESS] }] }
          - { id: done, type: success }
      - id: hidden
        path: /hidden
        steps:
          - { id: start, type: start, links: [{ to: done }] }
          - { id: done, type: success }
`,
);

describe('help and version', () => {
  test('--version prints the version of package.json', () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    const r = sagaway(['--version']);
    assert.equal(r.status, 0);
    assert.equal(r.stdout.trim(), version);
  });
  test('every command has its own --help, exit 0', () => {
    for (const command of ['init', 'start', 'gateway', 'runner', 'validate', 'run', 'routes', 'token']) {
      const r = sagaway([command, '--help']);
      assert.equal(r.status, 0, command);
      assert.equal(r.stdout.trim(), COMMAND_HELP[command]!.trim(), command);
      assert.match(r.stdout, new RegExp(`^Usage: sagaway ${command}`));
    }
  });
  test('run --help documents -X, -d, --user and --roles; start --help documents --host', () => {
    const run = sagaway(['run', '--help']).stdout;
    for (const flag of ['--method, -X', '-d, --data', '--user SUB', '--roles a,b']) assert.ok(run.includes(flag), flag);
    assert.match(sagaway(['start', '--help']).stdout, /--host H .*127\.0\.0\.1/s);
    assert.match(sagaway(['--help']).stdout, /routes .*token .*--version/s);
  });
  test("an option of another command is a usage error (exit 2) with that command's help", () => {
    const r = sagaway(['validate', '--config', file, '--runner', 'x']);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /Unknown option '--runner'/);
    assert.match(r.stderr, /Usage: sagaway validate/);
  });
});

describe('sagaway run', () => {
  test('--user and --roles make the caller; without them it is anonymous', () => {
    const r = sagaway(['run', '--config', file, '--user', 'alice', '--roles', 'user, admin', '/me']);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout).response, { sub: 'alice', roles: ['user', 'admin'], body: {} });
    const anon = JSON.parse(sagaway(['run', '--config', file, '/me']).stdout);
    assert.equal(anon.response.sub, undefined);
  });
  test('-X and -d are the method and the body', () => {
    const r = sagaway(['run', '--config', file, '-X', 'POST', '-d', '{"a":1}', '/me']);
    assert.deepEqual(JSON.parse(r.stdout).response.body, { a: 1 });
  });
  test('`run FILE PATH` is `run --config FILE PATH`; a wrong count says what is expected', () => {
    const r = sagaway(['run', file, '/hidden']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).outcome, 'SUCCESS');
    const bad = sagaway(['run', '--config', file, '/a', '/b']);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /run needs one PATH, got 2: sagaway run \[--config FILE\] PATH/);
    assert.match(sagaway(['run', '--config', file, '--roles', 'a', '/me']).stderr, /--roles needs --user/);
  });
});

describe('sagaway run prints the cause of UNHANDLED_STEP_FAILURE', () => {
  test('error.cause is the step error', () => {
    const r = sagaway(['run', '--config', file, '/broken']);
    assert.equal(r.status, 1);
    const { error } = JSON.parse(r.stdout);
    assert.equal(error.code, 'UNHANDLED_STEP_FAILURE');
    assert.match(error.message, /step "boom" failed with TRANSFORM_FAILED/);
    assert.equal(error.cause.code, 'TRANSFORM_FAILED');
  });
});

describe('sagaway routes', () => {
  test('the API -> runner -> saga table with auth and methods, then the unmapped sagas', () => {
    const r = sagaway(['routes', '--config', file]);
    assert.equal(r.status, 0, r.stderr);
    const rows = r.stdout
      .trim()
      .split('\n')
      .map((l) => l.split(/\s{2,}/));
    assert.deepEqual(rows[0], [
      'API',
      'METHODS',
      'AUTH',
      'RUNNER',
      'SAGA',
      'SAGA PATH',
      'SAGA METHODS',
      'SAGA ROLES',
      'URLS',
    ]);
    // the URLs a client calls, both forms (issue 19, item 6), and the saga's own roles (item 5)
    assert.deepEqual(rows[1], [
      '/me',
      'GET,POST',
      'public',
      'app',
      'me',
      '/me',
      'GET,POST',
      '-',
      '/api/request/me /api/stream/me',
    ]);
    assert.deepEqual(rows[2], [
      '/broken',
      'any',
      'public',
      'app',
      'broken',
      '/broken',
      'GET',
      '-',
      '/api/request/broken /api/stream/broken',
    ]);
    assert.deepEqual(rows[3], ['(none: 404)', 'app', 'hidden', '/hidden', 'GET', '-']);
    assert.match(r.stderr, /saga "hidden" .*not served by the gateway.*\(warning\)/);
  });
});

describe('gateway.host and --host', () => {
  test('gateway.host defaults to 127.0.0.1', async () => {
    const { settings } = await loadConfig(file);
    assert.equal(settings.gateway.host, '127.0.0.1');
  });
  test('start listens on 127.0.0.1 by default, and on --host when given', async () => {
    const s = await startSagaway(['--config', file, '--port', '0']);
    try {
      const started = s.lines.find((l) => l['msg'] === 'sagaway started')!;
      assert.equal(started['host'], '127.0.0.1');
      assert.equal((await fetch(`http://127.0.0.1:${s.port}/api/request/me`)).status, 200);
    } finally {
      await s.stop();
    }
    // IPv6 loopback is a machine feature: without it the test says so (and fails in CI); with
    // it, a start on ::1 that fails is this test's failure, not a silent pass.
    if (!(await ipv6Loopback())) {
      skipOrFail('no IPv6 loopback (::1) on this machine: --host ::1 is not tried');
      return;
    }
    const other = await startSagaway(['--config', file, '--port', '0', '--host', '::1']);
    try {
      assert.equal(other.lines.find((l) => l['msg'] === 'sagaway started')!['host'], '::1');
      assert.equal((await fetch(`http://[::1]:${other.port}/api/request/me`)).status, 200);
      await assert.rejects(fetch(`http://127.0.0.1:${other.port}/api/request/me`));
    } finally {
      await other.stop();
    }
  });
});

/** Whether this machine can listen on ::1. */
function ipv6Loopback(): Promise<boolean> {
  return new Promise((done) => {
    const srv = createServer();
    srv.once('error', () => done(false));
    srv.listen(0, '::1', () => srv.close(() => done(true)));
  });
}

describe('sagaway init', () => {
  test('writes a project, and refuses to write over one', () => {
    const target = join(dir, 'My Project');
    const r = sagaway(['init', target, '--sagaway', '/opt/sagaway-9.9.9.tgz']);
    assert.equal(r.status, 0, r.stderr);
    for (const f of [
      'package.json',
      'sagaway.yaml',
      'handlers/greeter.mjs',
      'sagas/hello.yaml',
      'sagas/notes.yaml',
      'test/app.test.mjs',
      '.gitignore',
      'README.md',
    ])
      assert.ok(existsSync(join(target, f)), f);
    const pkg = JSON.parse(readFileSync(join(target, 'package.json'), 'utf8'));
    assert.equal(pkg.name, 'my-project');
    assert.equal(pkg.dependencies.sagaway, 'file:/opt/sagaway-9.9.9.tgz');
    assert.match(readFileSync(join(target, '.gitignore'), 'utf8'), /^data\/$/m);
    const again = sagaway(['init', target]);
    assert.equal(again.status, 2);
    assert.match(again.stderr, /exists: init writes only into a new project/);
    assert.equal(
      JSON.parse(readFileSync(join(target, 'package.json'), 'utf8')).dependencies.sagaway,
      'file:/opt/sagaway-9.9.9.tgz',
    );
  });
  test('the project validates with no warning, and its routes are public', () => {
    const target = join(dir, 'fresh');
    assert.equal(sagaway(['init', target]).status, 0);
    // As `npm install` would: the handler module imports 'sagaway' from the project's node_modules.
    mkdirSync(join(target, 'node_modules'));
    symlinkSync(resolve('.'), join(target, 'node_modules', 'sagaway'), 'dir');
    const r = sagaway(['validate', '--config', join(target, 'sagaway.yaml')]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'ok: 1 runner(s), 4 saga(s)');
  });
});
