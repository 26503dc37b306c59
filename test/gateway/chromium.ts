import { existsSync } from 'node:fs';
import { needs } from '../require-services.js';

/** Debian's Chromium, driven by playwright-core in the browser tests (.ci/run installs it). */
export const CHROMIUM = '/usr/bin/chromium';

/** The `skip` option of a browser test: false when Chromium is there; a failure under SAGAWAY_REQUIRE_SERVICES=1. */
export function needsChromium(): string | false {
  return needs(existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is missing (apt-get install chromium)`);
}
