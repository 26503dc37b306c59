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

/**
 * Timing is relative (a shared 2-core machine makes absolute milliseconds meaningless): `linear`
 * is the best of five single passes over the same text, reading each character once; what is
 * measured must stay within a constant factor of it. A quadratic scan of 60 KB is some 60,000
 * passes, so any factor far below that tells linear from quadratic on any machine.
 */
function best(f: () => void, times = 5): number {
  let min = Infinity;
  for (let i = 0; i < times; i++) {
    const t0 = performance.now();
    f();
    min = Math.min(min, performance.now() - t0);
  }
  return min;
}

function linear(text: string): number {
  let n = 0;
  return (
    best(() => {
      for (let i = 0; i < text.length; i++) n += text.charCodeAt(i) & 1;
    }) +
    (n & 0)
  );
}

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
    assert.equal(parseDuration(text), undefined);
    assert.equal(parseSize(text), undefined);
    const parse = best(() => {
      parseDuration(text);
      parseSize(text);
    });
    const pass = linear(text);
    assert.ok(
      parse < 50 * pass + 0.05,
      `parsing ${JSON.stringify(text.slice(0, 12))}… took ${parse.toFixed(3)} ms, one pass ${pass.toFixed(3)} ms`,
    );
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
      assert.equal(re.test(text), false);
      const match = best(() => re.test(text));
      const pass = linear(text);
      assert.ok(
        match < 500 * pass + 0.05,
        `${source} on ${JSON.stringify(text.slice(0, 12))}… took ${match.toFixed(3)} ms, one pass ${pass.toFixed(3)} ms`,
      );
    }
  }
});

/** Stream `responses` once; what arrived, the polls' `previous`, the time it took and the event loop's longest stall. */
async function streamOnce(responses: unknown[]) {
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
  const previous = svc.calls.map((c) => c.req.input['previous']);
  return { got, previous, elapsed, stall: delay.max / 1e6 };
}

test('a saga answering a 60 KB wait: the stream goes on with the default wait, the event loop never stalls', async () => {
  const responses = [
    { list: [1], next: 'a', continue: true, wait: '1' + ' '.repeat(60_000) + 'x' },
    { list: [2], next: 'b', continue: true, wait: ' '.repeat(100_000) },
    { list: [3] },
  ];
  // The same stream with ordinary waits, measured first on this machine as it is now.
  const benign = responses.map((r) => ('wait' in r ? { ...r, wait: '10ms' } : r));
  const calibration = await streamOnce(benign);
  const hostileRun = await streamOnce(responses);
  assert.deepEqual(hostileRun.got, [1, 2, 3], 'every entry delivered, none lost');
  assert.deepEqual(hostileRun.previous, [undefined, 'a', 'b']);
  const why = `hostile: ${hostileRun.elapsed.toFixed(0)} ms, stall ${hostileRun.stall.toFixed(0)} ms; ordinary: ${calibration.elapsed.toFixed(0)} ms, stall ${calibration.stall.toFixed(0)} ms`;
  // the old parser stalled for seconds: 2.85 s, against some 30 ms for the whole ordinary stream
  assert.ok(hostileRun.stall < 10 * calibration.stall + 50, `the event loop stalled: ${why}`);
  assert.ok(hostileRun.elapsed < 10 * calibration.elapsed + 100, `the stream took too long: ${why}`);
});
