import { DEFAULT_MAX_VALUES } from '../core/json-values.js';
import { parseDuration, parseSize } from '../core/units.js';
import type { RawApi, RawGateway } from './schema.js';
import type { LimitSettings, RateSettings } from './settings.js';

/**
 * `gateway.limits` and `gateway.apis[].rate` with their documented defaults (docs/gateway.md,
 * "Limits"): what one request, one connection and one client may take.
 */

/** Default per-client rate: generous for a person or a browser app, a wall for a script. */
export const DEFAULT_RATE: RateSettings = { max: 200, windowMs: 10_000 };

const ms = (v: unknown, fallback: number) => parseDuration(v) ?? fallback;

/** Compiled `gateway.limits`. */
export function compileLimits(raw: RawGateway['limits']): LimitSettings {
  const l = raw ?? {};
  const timeoutMs = ms(l.timeout, 10_000);
  const bodyTimeoutMs = ms(l.bodyTimeout, 30_000);
  const rate = l.rate === false ? undefined : (l.rate ?? {});
  return {
    bodyLimit: parseSize(l.bodyLimit) ?? 1024 * 1024,
    timeoutMs,
    maxResponse: Math.max(1, parseSize(l.maxResponse) ?? 8 * 1024 * 1024),
    // bodyTimeout counts the headers too: an unset headerTimeout follows a shorter bodyTimeout
    // rather than making the user's own setting invalid (issue 19, item 6).
    headerTimeoutMs: ms(l.headerTimeout, Math.min(10_000, bodyTimeoutMs)),
    bodyTimeoutMs,
    // A one-shot request is silent while its saga runs: the idle cut must come after the deadline.
    idleTimeoutMs: ms(l.idleTimeout, Math.max(60_000, timeoutMs + 10_000)),
    maxConnections: l.maxConnections ?? 16_384,
    maxValues: l.maxValues ?? DEFAULT_MAX_VALUES,
    ...(rate === undefined
      ? {}
      : {
          rate: {
            max: rate.max ?? DEFAULT_RATE.max,
            windowMs: ms(rate.window, DEFAULT_RATE.windowMs),
            ...(rate.redis !== undefined ? { redis: rate.redis } : {}),
          },
        }),
  };
}

/** Compiled `gateway.apis[].rate` (undefined = the gateway's). */
export function compileApiRate(raw: RawApi['rate']): RateSettings | false | undefined {
  if (raw === undefined || raw === false) return raw;
  return { max: raw.max, windowMs: ms(raw.window, DEFAULT_RATE.windowMs) };
}

/** Combinations that cannot work, as [setting, message] pairs (paths under `gateway.limits`). */
export function limitIssues(limits: LimitSettings, raw: RawGateway['limits']): Array<[string, string]> {
  const issues: Array<[string, string]> = [];
  const positive: Array<[string, number]> = [
    ['headerTimeout', limits.headerTimeoutMs],
    ['bodyTimeout', limits.bodyTimeoutMs],
    ['idleTimeout', limits.idleTimeoutMs],
  ];
  for (const [name, value] of positive) if (value <= 0) issues.push([name, 'must be longer than 0']);
  if (limits.headerTimeoutMs > limits.bodyTimeoutMs) {
    issues.push(['headerTimeout', 'must not be longer than bodyTimeout (which counts the headers too)']);
  }
  if (raw?.idleTimeout !== undefined && limits.idleTimeoutMs <= limits.timeoutMs) {
    issues.push(['idleTimeout', 'must be longer than timeout: a request is silent while its saga runs']);
  }
  if (limits.rate && limits.rate.windowMs <= 0) issues.push(['rate', 'window must be longer than 0']);
  return issues;
}
