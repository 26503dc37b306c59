import { test } from 'node:test';
import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { EventSource } from 'eventsource';
import { DURATION_PATTERN, SIZE_PATTERN, parseDuration, parseSize } from '../../src/core/units.js';
import { ok, ScriptedService, startGateway } from '../gateway/harness.js';

/**
 * Issue 9, item 5: durations and sizes were parsed by regexes with two adjacent `\s*`, which
 * backtrack quadratically; a saga answering a 60 KB `wait` froze the gateway for 2.85 s. The
 * parser is now a linear scanner with a length bound, and the schema patterns are linear too.
 */

/** Inputs that made the old regexes quadratic: a long run of what two quantifiers both accept. */
function hostile(size: number): string[] {
  return [
    '1' + ' '.repeat(size) + 'x',
    '1' + '\t'.repeat(size) + '!',
    ' '.repeat(size) + 'x',
    '1.' + '5'.repeat(size) + ' y',
    '1' + ' '.repeat(size) + 'ms' + ' '.repeat(size) + 'x',
  ];
}

test('a 60 KB hostile wait parses in microseconds and is refused', () => {
  for (const text of hostile(60_000)) {
    const t0 = performance.now();
    assert.equal(parseDuration(text), undefined);
    assert.equal(parseSize(text), undefined);
    assert.ok(performance.now() - t0 < 20, `parsing ${JSON.stringify(text.slice(0, 12))}… took too long`);
  }
  // a valid form made long is refused by its length alone
  assert.equal(parseDuration('9'.repeat(60_000)), undefined);
  // the forms that are valid still are, padding included
  assert.equal(parseDuration(' 1.5 s '), 1500);
  assert.equal(parseSize(' 64 KB '), 65536);
});

test('the JSON Schema patterns of durations and sizes are linear as well', () => {
  for (const source of [DURATION_PATTERN, SIZE_PATTERN]) {
    const re = new RegExp(source, 'u'); // as a JSON Schema validator compiles it
    for (const text of hostile(60_000)) {
      const t0 = performance.now();
      assert.equal(re.test(text), false);
      assert.ok(performance.now() - t0 < 50, `${source} on ${JSON.stringify(text.slice(0, 12))}… took too long`);
    }
  }
});

test('a saga answering a 60 KB wait: the stream goes on with the default wait, the event loop never stalls', async () => {
  const responses = [
    { list: [1], next: 'a', continue: true, wait: '1' + ' '.repeat(60_000) + 'x' },
    { list: [2], next: 'b', continue: true, wait: ' '.repeat(100_000) },
    { list: [3] },
  ];
  const svc = new ScriptedService((_req, _r, n) => ok(responses[n - 1]));
  const { base, close } = await startGateway(svc, { stream: { minWaitMs: 5, defaultWaitMs: 10 } });
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const es = new EventSource(base + '/api/stream/x');
  const got: unknown[] = [];
  const ended = new Promise<void>((resolve, reject) => {
    es.onmessage = (ev) => got.push(JSON.parse(ev.data));
    es.addEventListener('end', () => resolve());
    es.addEventListener('error', (ev) => {
      if ((ev as unknown as { data?: string }).data !== undefined) reject(new Error('stream error event'));
    });
  });
  const t0 = performance.now();
  await ended;
  const elapsed = performance.now() - t0;
  es.close();
  delay.disable();
  await close();
  assert.deepEqual(got, [1, 2, 3], 'every entry delivered, none lost');
  assert.deepEqual(
    svc.calls.map((c) => c.req.input['previous']),
    [undefined, 'a', 'b'],
  );
  const maxStallMs = delay.max / 1e6;
  assert.ok(maxStallMs < 250, `the event loop stalled for ${maxStallMs.toFixed(0)} ms`);
  assert.ok(elapsed < 2000, `the stream took ${elapsed.toFixed(0)} ms`);
});
