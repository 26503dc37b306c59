import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { DURATION_PATTERN, MAX_UNIT_TEXT, SIZE_PATTERN, parseDuration, parseSize } from './units.js';

/**
 * Properties of the duration and size scanner: on short text it accepts exactly the language of
 * the former regexes (and of the schema patterns), and on any text, however long and hostile,
 * it is linear: 10,000 inputs of up to 100 KB parse in well under a second in total.
 */

// the former parsers, run only on text of at most MAX_UNIT_TEXT characters, where their
// backtracking is harmless: they define the accepted language
// eslint-disable-next-line regexp/no-super-linear-backtracking, regexp/prefer-character-class -- kept verbatim
const OLD_DURATION = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/;
// eslint-disable-next-line regexp/no-super-linear-backtracking
const OLD_SIZE = /^\s*(\d+)\s*(b|kb|mb|gb)?\s*$/i;
const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const SIZE_UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

function oldDuration(text: string): number | undefined {
  const m = OLD_DURATION.exec(text);
  if (!m) return undefined;
  const ms = Number(m[1]) * (DURATION_UNITS[m[2] ?? 'ms'] ?? 1);
  return Number.isFinite(ms) ? Math.round(ms) : undefined;
}

function oldSize(text: string): number | undefined {
  const m = OLD_SIZE.exec(text);
  if (!m) return undefined;
  const bytes = Number(m[1]) * (SIZE_UNITS[(m[2] ?? 'b').toLowerCase()] ?? 1);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

/** Text made of the pieces the grammar is about, so that valid and near-valid forms are common. */
const piece = fc.constantFrom(
  ' ',
  '\t',
  '\n',
  '\u00a0',
  '\ufeff',
  '0',
  '1',
  '7',
  '9',
  '.',
  'm',
  's',
  'h',
  'b',
  'k',
  'K',
  'B',
  'G',
  'x',
  '-',
);
const unitText = fc.array(piece, { maxLength: MAX_UNIT_TEXT }).map((parts) => parts.join(''));

test('on short text, the scanner accepts what the former regexes and the schema patterns accept', () => {
  const durationRe = new RegExp(DURATION_PATTERN, 'u');
  const sizeRe = new RegExp(SIZE_PATTERN, 'u');
  fc.assert(
    fc.property(fc.oneof(unitText, fc.string({ maxLength: MAX_UNIT_TEXT })), (text) => {
      assert.equal(parseDuration(text), oldDuration(text));
      assert.equal(parseSize(text), oldSize(text));
      assert.equal(durationRe.test(text), OLD_DURATION.test(text));
      assert.equal(sizeRe.test(text), OLD_SIZE.test(text));
    }),
    { numRuns: 20_000 },
  );
});

test('text over the bound is refused, whatever it holds', () => {
  assert.equal(parseDuration('1' + ' '.repeat(MAX_UNIT_TEXT)), undefined);
  assert.equal(parseDuration(' '.repeat(MAX_UNIT_TEXT - 2) + '1s'), 1000);
  assert.equal(parseSize('0'.repeat(MAX_UNIT_TEXT + 1)), undefined);
});

/** Up to 100 KB: a prefix, one piece repeated, a suffix (the shape of every backtracking attack). */
const hostile = fc
  .tuple(
    unitText,
    fc.constantFrom(' ', '\t', '1', '.', '1 ', ' 1', 'ms', 's '),
    fc.integer({ min: 0, max: 100_000 }),
    unitText,
  )
  .map(([head, unit, n, tail]) => head + unit.repeat(Math.ceil(n / unit.length)).slice(0, n) + tail);

test('10,000 random and hostile inputs of up to 100 KB parse in linear time (against one pass over them)', () => {
  const inputs = fc.sample(fc.oneof(hostile, fc.string({ maxLength: 1000 })), 10_000);
  // flatten first, so the time measured is parsing, not building the strings
  let chars = 0;
  for (const text of inputs) chars += text.charCodeAt(text.length >> 1) >= 0 ? text.length : 0;
  const durationRe = new RegExp(DURATION_PATTERN, 'u');
  const sizeRe = new RegExp(SIZE_PATTERN, 'u');
  const t0 = performance.now();
  for (const text of inputs) {
    parseDuration(text);
    parseSize(text);
  }
  const parseMs = performance.now() - t0;
  const t1 = performance.now();
  for (const text of inputs) {
    durationRe.test(text);
    sizeRe.test(text);
  }
  const patternMs = performance.now() - t1;
  // The calibration, on this machine as it is now: one pass over every input, reading each character once.
  let odd = 0;
  const t2 = performance.now();
  for (const text of inputs) for (let i = 0; i < text.length; i++) odd += text.charCodeAt(i) & 1;
  const passMs = performance.now() - t2;
  assert.ok(chars > 10_000_000, 'the inputs are large');
  assert.ok(odd >= 0);
  const why = `parsing ${parseMs.toFixed(0)} ms, patterns ${patternMs.toFixed(0)} ms, one pass ${passMs.toFixed(0)} ms`;
  // the parser refuses long inputs by their length: far less than one pass (a quadratic one is thousands)
  assert.ok(parseMs < 5 * passMs + 50, why);
  // the patterns have no length bound of their own (the schema adds maxLength): linear, not instant
  assert.ok(patternMs < 100 * passMs + 50, why);
});
