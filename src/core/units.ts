/**
 * Durations and sizes as written in configuration and in stream responses (DESIGN §3, §7).
 *
 * Both are parsed by a hand-written scanner, not a regex: a saga's response (`wait`) and an
 * event's parameters (`timeout`) are request data, and the former regexes backtracked
 * quadratically on long runs of spaces (a 60 KB `wait` held the event loop for 2.85 s). The
 * scanner reads each character at most once, and anything longer than MAX_UNIT_TEXT is
 * refused before it is read at all.
 */

/** Longest duration or size text accepted (`"  1.5s "`, `"512mb"` are far shorter). */
export const MAX_UNIT_TEXT = 32;

// Maps, not object literals: a unit such as "constructor" must not find Object.prototype
const DURATION_UNITS: ReadonlyMap<string, number> = new Map([
  ['ms', 1],
  ['s', 1000],
  ['m', 60_000],
  ['h', 3_600_000],
]);
const SIZE_UNITS: ReadonlyMap<string, number> = new Map([
  ['b', 1],
  ['kb', 1024],
  ['mb', 1024 ** 2],
  ['gb', 1024 ** 3],
]);

/** A number of milliseconds, a string of digits (milliseconds), or `"250ms"`, `"2s"`, `"5m"`, `"1h"`. */
export type Duration = number | string;

/**
 * Parse a duration into milliseconds; undefined when it is not a valid duration (negative,
 * not finite, longer than MAX_UNIT_TEXT, or not of the accepted forms).
 */
export function parseDuration(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? Math.round(value) : undefined;
  const parts = scan(value, true);
  if (!parts) return undefined;
  const factor = parts.unit === '' ? 1 : DURATION_UNITS.get(parts.unit);
  if (factor === undefined) return undefined;
  const ms = Number(parts.number) * factor;
  return Number.isFinite(ms) ? Math.round(ms) : undefined;
}

/** Regex for the JSON Schema of durations (the same language as parseDuration, linear to match). */
export const DURATION_PATTERN = '^\\s*\\d+(\\.\\d+)?(\\s*(ms|[smh]))?\\s*$';

/** Parse a size (`512`, `"512b"`, `"64kb"`, `"1mb"`, `"1gb"`, 1024-based, any case) into bytes. */
export function parseSize(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  const parts = scan(value, false);
  if (!parts) return undefined;
  const factor = parts.unit === '' ? 1 : SIZE_UNITS.get(parts.unit.toLowerCase());
  if (factor === undefined) return undefined;
  const bytes = Number(parts.number) * factor;
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

/** Regex for the JSON Schema of sizes. */
export const SIZE_PATTERN = '^\\s*\\d+(\\s*([bB]|[kK][bB]|[mM][bB]|[gG][bB]))?\\s*$';

/**
 * Split `  <digits>[.<digits>] [letters]  ` into the number and the unit (letters, unchecked);
 * undefined for anything else. Whitespace is what `\s` and trim() agree on.
 */
function scan(value: unknown, fraction: boolean): { number: string; unit: string } | undefined {
  if (typeof value !== 'string' || value.length > MAX_UNIT_TEXT) return undefined;
  const text = value.trim();
  const n = text.length;
  let i = 0;
  while (i < n && isDigit(text.charCodeAt(i))) i++;
  if (i === 0) return undefined;
  if (fraction && text.charCodeAt(i) === 0x2e /* . */) {
    const start = ++i;
    while (i < n && isDigit(text.charCodeAt(i))) i++;
    if (i === start) return undefined;
  }
  const number = text.slice(0, i);
  // optional blanks between the number and the unit ("5 s"), as the schema pattern allows
  const unit = text.slice(i).trimStart();
  for (let j = 0; j < unit.length; j++) if (!isLetter(unit.charCodeAt(j))) return undefined;
  return { number, unit };
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function isLetter(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a);
}
