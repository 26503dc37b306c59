import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { sagaway } from './spawn.js';

/**
 * Issue 24 item 8: a project made by `sagaway init` answers npm 11's install-scripts advisory for
 * the two dependencies that have install scripts, and its README says why. (That npm then lists
 * nothing is checked where the project is really installed: test/docs/first-saga.int.test.ts.)
 */

const dir = mkdtempSync(join(tmpdir(), 'sagaway-init-scripts-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('package.json allows better-sqlite3 its install script and denies sagaway its prepare; the README explains', () => {
  const target = join(dir, 'shop');
  const r = sagaway(['init', target, '--sagaway', '^0.1.0']);
  assert.equal(r.status, 0, r.stderr);
  const pkg = JSON.parse(readFileSync(join(target, 'package.json'), 'utf8')) as Record<string, unknown>;
  assert.deepEqual(pkg['allowScripts'], { 'better-sqlite3': true, sagaway: false });
  const readme = readFileSync(join(target, 'README.md'), 'utf8').replace(/\s+/g, ' ');
  assert.match(readme, /## npm and install scripts/);
  assert.match(readme, /npm warn install-scripts/);
  assert.match(readme, /`better-sqlite3` may run its install script/);
  assert.match(readme, /sagaway's own `prepare` is not needed/);
  assert.match(readme, /`npm install-scripts ls`/);
});
