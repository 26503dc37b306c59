import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, test } from 'node:test';
import { runBlock, runnableBlocks, stopBackground, type Session } from './runnable.js';

/**
 * docs/first-saga.md, followed as written in an empty folder: `sagaway init`, `npm install` of
 * sagaway from a tarball made by `npm pack` of this checkout (its dependencies from the npm
 * registry), `npm test` of the new project, `npm start` on a free port, its API and stream with
 * curl, a handler, sagas and a test added as the guide says, then auth with `sagaway token`.
 *
 * Needs the npm registry: skips with a reason when it is unreachable, unless
 * SAGAWAY_REQUIRE_SERVICES=1 (then it fails).
 */

const GUIDE = 'docs/first-saga.md';
const work = mkdtempSync(join(tmpdir(), 'sagaway-first-saga-'));
const session: Session = { cwd: work, env: {}, timeoutMs: 150_000 };
after(async () => {
  await stopBackground(session);
  rmSync(work, { recursive: true, force: true });
});

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => done(port));
    });
  });
}

/** Whether the npm registry answers (one ping, 10 s at most). */
function registryReachable(): boolean {
  const r = spawnSync('npm', ['ping'], { encoding: 'utf8', timeout: 10_000 });
  return r.status === 0;
}

/**
 * $SAGAWAY as the guide expects it: a checkout with dist/ and a tarball. The tarball is packed
 * without scripts (dist/ was just built by the test run; rebuilding it here would rewrite files
 * other tests are reading).
 */
function sagawayHome(): string {
  const home = join(work, 'sagaway');
  mkdirSync(home);
  symlinkSync(resolve('dist'), join(home, 'dist'), 'dir');
  const r = spawnSync('npm', ['pack', '--ignore-scripts', '--pack-destination', home], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(readdirSync(home).filter((f) => f.endsWith('.tgz')).length, 1);
  return home;
}

/**
 * better-sqlite3 downloads a prebuilt binary on install, or compiles one (a minute or more) when
 * GitHub is out of reach. prebuild-install's documented local prebuilds folder, filled from the
 * binary already built for this checkout, keeps the install to seconds either way; it is the
 * same binary a download would give.
 */
function localPrebuilds(): NodeJS.ProcessEnv {
  const pkg = resolve('node_modules', 'better-sqlite3');
  const binary = join(pkg, 'build', 'Release', 'better_sqlite3.node');
  if (!existsSync(binary)) return {};
  const { version } = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as { version: string };
  const dir = join(work, 'prebuilds');
  mkdirSync(dir);
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  const r = spawnSync('tar', ['-czf', join(dir, name), '-C', pkg, 'build/Release/better_sqlite3.node']);
  return r.status === 0 ? { npm_config_better_sqlite3_local_prebuilds: dir } : {};
}

describe('docs/first-saga.md, followed as written', () => {
  test('init, install from the packed tarball, test, start, API, stream, handler, saga, auth', async (t) => {
    if (!registryReachable()) {
      if (process.env['SAGAWAY_REQUIRE_SERVICES'] === '1') assert.fail('the npm registry is unreachable');
      t.skip('the npm registry is unreachable (npm ping failed): the guide installs from it');
      return;
    }
    const blocks = runnableBlocks(readFileSync(GUIDE, 'utf8'), GUIDE);
    assert.ok(blocks.length >= 12, 'the guide has its runnable blocks');
    const port = await freePort();
    session.port = port;
    // The project's own `node --test` must not think it runs inside this test file.
    const { NODE_TEST_CONTEXT: _nested, ...env } = process.env;
    session.env = {
      ...env,
      ...localPrebuilds(),
      SAGAWAY: sagawayHome(),
      PORT: String(port),
      LOG_LEVEL: 'warn',
      NODE_ENV: '',
      npm_config_prefer_offline: 'true',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_update_notifier: 'false',
    };
    const started = Date.now();
    for (const block of blocks) await runBlock(block, session);
    t.diagnostic(`the guide ran in ${Math.round((Date.now() - started) / 1000)} s`);
    const project = join(work, 'my-saga');
    assert.equal(session.cwd, project);
    // The tarball, not the checkout, is what the project runs.
    const pkg = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    assert.match(pkg.dependencies['sagaway']!, /^file:.*sagaway-[\d.]+\.tgz$/);
    assert.ok(existsSync(join(project, 'node_modules', 'sagaway', 'dist', 'src', 'index.js')));
    assert.ok(!existsSync(join(project, 'node_modules', 'sagaway', 'src')), 'only the packed files');
    // npm 11.16+ reviews install scripts: the project's allowScripts covers every one it has.
    const scripts = spawnSync('npm', ['install-scripts', 'ls'], { cwd: project, encoding: 'utf8', env: session.env });
    if (scripts.status === 0 && !/Unknown command/i.test(scripts.stdout + scripts.stderr)) {
      assert.match(scripts.stdout, /No packages with unreviewed install scripts/, scripts.stdout + scripts.stderr);
    } else
      t.diagnostic(
        `npm ${spawnSync('npm', ['--version'], { encoding: 'utf8' }).stdout.trim()} has no install-scripts review`,
      );
  });
});
