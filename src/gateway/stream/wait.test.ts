import { test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from './wait.js';
import { gatewaySettingsForTest } from '../../../test/gateway/settings-for-test.js';

const s = gatewaySettingsForTest({ stream: { defaultWaitMs: 1000, minWaitMs: 50, maxWaitMs: 60_000 } }).stream;

test('wait accepts milliseconds, digit strings and durations, clamped to minWait..maxWait', () => {
  assert.equal(waitFor(250, s), 250);
  assert.equal(waitFor('250', s), 250);
  assert.equal(waitFor('2s', s), 2000);
  assert.equal(waitFor('1.5s', s), 1500);
  assert.equal(waitFor(0, s), 50);
  assert.equal(waitFor('10ms', s), 50);
  assert.equal(waitFor('5m', s), 60_000);
  assert.equal(waitFor(undefined, s), 1000);
});

test('an unusable wait is reported and the default is used', () => {
  const seen: unknown[] = [];
  for (const v of ['soon', -5, '1d', {}, [], true, Number.NaN])
    assert.equal(
      waitFor(v, s, (x) => seen.push(x)),
      1000,
    );
  assert.equal(seen.length, 7);
});
