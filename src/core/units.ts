/** Durations and sizes as written in configuration and in stream responses (DESIGN §3, §7). */

const DURATION_RE = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/;
const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A number of milliseconds, a string of digits (milliseconds), or `"250ms"`, `"2s"`, `"5m"`, `"1h"`. */
export type Duration = number | string;

/**
 * Parse a duration into milliseconds; undefined when it is not a valid duration (negative,
 * not finite, or not of the accepted forms).
 */
export function parseDuration(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? Math.round(value) : undefined;
  if (typeof value !== 'string') return undefined;
  const m = DURATION_RE.exec(value);
  if (!m) return undefined;
  const ms = Number(m[1]) * (DURATION_UNITS[m[2] ?? 'ms'] ?? 1);
  return Number.isFinite(ms) ? Math.round(ms) : undefined;
}

/** Regex for the JSON Schema of durations (kept in step with parseDuration). */
export const DURATION_PATTERN = '^\\s*\\d+(\\.\\d+)?\\s*(ms|s|m|h)?\\s*$';

const SIZE_RE = /^\s*(\d+)\s*(b|kb|mb|gb)?\s*$/i;
const SIZE_UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

/** Parse a size (`512`, `"512b"`, `"64kb"`, `"1mb"`, `"1gb"`, 1024-based) into bytes. */
export function parseSize(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const m = SIZE_RE.exec(value);
  if (!m) return undefined;
  const bytes = Number(m[1]) * (SIZE_UNITS[(m[2] ?? 'b').toLowerCase()] ?? 1);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

/** Regex for the JSON Schema of sizes. */
export const SIZE_PATTERN = '^\\s*\\d+\\s*([bB]|[kK][bB]|[mM][bB]|[gG][bB])?\\s*$';
