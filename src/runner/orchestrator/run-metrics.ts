import { Gauge, type Registry } from 'prom-client';
import type { RunAdmin } from '../../core/runs.js';

/**
 * `/metrics` gauge of suspended runs (issue 22): runs whose retries ran out under
 * `onExhausted: suspend`, waiting for an operator's redrive or abort, read from the journals
 * when scraped (through the run list's index: pages of SUSPENDED runs only). It counts the
 * whole journal (every replica's runs), up to MAX_COUNTED; a journal that cannot be read leaves
 * the last value.
 */

/** Suspended runs counted at most per scrape (50 pages of 200). */
export const MAX_COUNTED = 10_000;

export function runMetrics(registry: Registry, runs: RunAdmin): void {
  let last = 0;
  let reading: Promise<number> | undefined;
  const count = async (): Promise<number> => {
    let n = 0;
    let cursor: string | undefined;
    do {
      const page = await runs.list({ status: 'SUSPENDED', limit: 200, ...(cursor ? { cursor } : {}) });
      n += page.runs.length;
      cursor = page.next;
    } while (cursor !== undefined && n < MAX_COUNTED);
    return n;
  };
  new Gauge({
    name: 'sagaway_runs_suspended',
    help: 'Journaled runs SUSPENDED (their retries ran out under onExhausted: suspend), waiting for a redrive or abort',
    registers: [registry],
    async collect() {
      reading ??= count()
        .then((n) => (last = n))
        .catch(() => last)
        .finally(() => (reading = undefined));
      this.set(await reading);
    },
  });
}
