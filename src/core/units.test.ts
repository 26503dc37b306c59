import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseDuration, parseSize } from './units.js';

test('durations: numbers are ms, digit strings are ms, units ms/s/m/h', () => {
  assert.equal(parseDuration(250), 250);
  assert.equal(parseDuration('250'), 250);
  assert.equal(parseDuration('250ms'), 250);
  assert.equal(parseDuration('2s'), 2000);
  assert.equal(parseDuration('1.5s'), 1500);
  assert.equal(parseDuration('5m'), 300_000);
  assert.equal(parseDuration('1h'), 3_600_000);
  for (const bad of [-1, Infinity, NaN, '', 'soon', '5 minutes', '1d', '-2s', {}, null, true])
    assert.equal(parseDuration(bad), undefined, String(bad));
});

test('sizes are 1024-based', () => {
  assert.equal(parseSize(512), 512);
  assert.equal(parseSize('512b'), 512);
  assert.equal(parseSize('64kb'), 65536);
  assert.equal(parseSize('1MB'), 1048576);
  assert.equal(parseSize('1gb'), 1073741824);
  for (const bad of [-1, 1.5, '1tb', 'big', '']) assert.equal(parseSize(bad), undefined, String(bad));
});
