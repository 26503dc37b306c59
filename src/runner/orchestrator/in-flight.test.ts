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

test('a slot reused by a later run is not freed by the earlier run ending again', () => {
  const runs = new InFlightRuns();
  const first = runs.add('a', 's');
  runs.remove(first);
  const second = runs.add('b', 's'); // takes the freed slot
  assert.notEqual(second, first);
  runs.remove(first); // a late second end of the first run
  assert.deepEqual(
    runs.list(10).map((r) => r.requestId),
    ['b'],
  );
  runs.remove(second);
  assert.equal(runs.size, 0);
});

test('listed in start order though slots are reused out of order', () => {
  const runs = new InFlightRuns();
  const ids = ['a', 'b', 'c', 'd'].map((r) => runs.add(r, 's'));
  runs.remove(ids[2]!);
  runs.remove(ids[0]!);
  runs.add('e', 's'); // reuses c's or a's slot, but started last
  runs.add('f', 's');
  assert.deepEqual(
    runs.list(10).map((r) => r.requestId),
    ['b', 'd', 'e', 'f'],
  );
  assert.deepEqual(
    runs.list(1).map((r) => r.requestId),
    ['b'],
  );
  assert.equal(runs.size, 4);
});
