import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InFlightRuns } from './in-flight.js';

test('runs in flight: listed oldest first, up to a limit, gone when they end', () => {
  const runs = new InFlightRuns();
  const endA = runs.add('a', 's1');
  const endB = runs.add('b', 's2');
  runs.add('c', 's1');
  assert.equal(runs.size, 3);
  assert.deepEqual(
    runs.list(2).map((r) => r.requestId),
    ['a', 'b'],
  );
  runs.remove(endA);
  runs.remove(endB);
  runs.remove(endB); // ending twice is harmless
  assert.deepEqual(
    runs.list(10).map((r) => [r.requestId, r.saga]),
    [['c', 's1']],
  );
  assert.equal(runs.size, 1);
});

test('two runs with the same request id (the polls of one stream) are two entries', () => {
  const runs = new InFlightRuns();
  const end1 = runs.add('same', 's');
  runs.add('same', 's');
  runs.remove(end1);
  assert.equal(runs.size, 1);
});
