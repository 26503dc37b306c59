import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';

/** Issue 24 item 1: `npm test` (scripts/test.mjs) says its progress, one line per file as it ends. */

function runTests(...args: string[]) {
  // Without the variable that tells node:test it runs inside a test file (it would skip them).
  const { NODE_TEST_CONTEXT: _inner, ...env } = process.env;
  return spawnSync(process.execPath, ['scripts/test.mjs', ...args], { encoding: 'utf8', env });
}

test('one line per test file with its place, result, time and count; a summary at the end', () => {
  const r = runTests('dist/src/core/units.test.js', 'dist/src/core/path.test.js');
  assert.equal(r.status, 0, r.stdout + r.stderr);
  const lines = r.stdout.split('\n').filter((l) => l.startsWith('['));
  assert.equal(lines.length, 2, r.stdout);
  for (const line of lines)
    assert.match(line, /^\[[12]\/2\] ok {5}dist\/src\/core\/(units|path)\.test\.js {2}\d+\.\d s, \d+ tests$/);
  assert.deepEqual(lines.map((l) => l.slice(0, 5)).sort(), ['[1/2]', '[2/2]']);
  for (const line of lines) assert.ok(Number(/(\d+) tests$/.exec(line)![1]) > 0, `tests ran: ${line}`);
  assert.match(r.stdout, /^2 files, \d+ tests: \d+ passed, 0 failed, 0 skipped, 0 cancelled, in \d+\.\d min$/m);
  // A passing file's own output is not repeated (only a failed one's, or with --verbose).
  assert.doesNotMatch(r.stdout, /^TAP version/m);
});

test('--verbose prints each file output; no matching file is an error', () => {
  const verbose = runTests('--verbose', 'dist/src/core/path.test.js');
  assert.equal(verbose.status, 0);
  assert.match(verbose.stdout, /^TAP version 13$/m);
  const none = runTests('no-such-test-file');
  assert.equal(none.status, 1);
  assert.match(none.stderr, /no test files matched/);
});
