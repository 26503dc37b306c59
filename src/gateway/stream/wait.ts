import type { StreamSettings } from '../../config/settings.js';
import { parseDuration } from '../../core/units.js';

/**
 * The pause between two polls (DESIGN §7): the response's `wait` (milliseconds, a string of
 * digits, or a duration string), else `defaultWait`, always clamped to minWait..maxWait. An
 * unusable `wait` is reported through `onInvalid` and the default is used.
 */
export function waitFor(value: unknown, settings: StreamSettings, onInvalid?: (value: unknown) => void): number {
  let ms = settings.defaultWaitMs;
  if (value !== undefined && value !== null) {
    const parsed = parseDuration(value);
    if (parsed === undefined) onInvalid?.(value);
    else ms = parsed;
  }
  return Math.min(settings.maxWaitMs, Math.max(settings.minWaitMs, ms));
}
