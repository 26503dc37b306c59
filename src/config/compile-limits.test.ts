import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileLimits, limitIssues } from './compile-limits.js';

/** Defaults that follow the user (issue 19, item 6). */

test('an unset headerTimeout follows a shorter bodyTimeout: `limits: { bodyTimeout: 2s }` alone is valid', () => {
  const raw = { bodyTimeout: '2s' };
  const limits = compileLimits(raw);
  assert.equal(limits.headerTimeoutMs, 2000);
  assert.equal(limits.bodyTimeoutMs, 2000);
  assert.deepEqual(limitIssues(limits, raw), []);
});

test('the default headerTimeout stays 10s under a longer bodyTimeout; a headerTimeout the user wrote is still checked', () => {
  assert.equal(compileLimits({ bodyTimeout: '1m' }).headerTimeoutMs, 10_000);
  assert.equal(compileLimits(undefined).headerTimeoutMs, 10_000);
  const raw = { bodyTimeout: '2s', headerTimeout: '5s' };
  assert.deepEqual(limitIssues(compileLimits(raw), raw), [
    ['headerTimeout', 'must not be longer than bodyTimeout (which counts the headers too)'],
  ]);
});
