import { Gauge, type Registry } from 'prom-client';
import type { WaitStats } from '../../states/waits/store.js';

/**
 * `/metrics` gauges of waits (issue 21), read from the wait stores when scraped: parked runs,
 * waits ready to resume (due timers, resolved waits not yet taken), and correlation signals kept
 * for a wait to come. They count the whole store (every replica's runs), so any one process's
 * scrape tells the cluster's backlog. A store that cannot be read leaves the last values.
 */
export function waitMetrics(registry: Registry, stats: () => Promise<WaitStats>): void {
  let last: WaitStats = { parked: 0, due: 0, kept: 0 };
  let reading: Promise<WaitStats> | undefined;
  const read = async (): Promise<WaitStats> => {
    reading ??= stats()
      .then((s) => (last = s))
      .catch(() => last)
      .finally(() => (reading = undefined));
    return reading;
  };
  const gauge = (name: string, help: string, pick: (s: WaitStats) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        this.set(pick(await read()));
      },
    });
  gauge('sagaway_waits_parked', 'Runs parked on a wait step (timers and signals), in the wait stores', (s) => s.parked);
  gauge(
    'sagaway_waits_due',
    'Parked runs ready to resume: due timers and timeouts, resolved waits not yet taken',
    (s) => s.due,
  );
  gauge('sagaway_signals_kept', 'Correlation signals kept for a wait that has not parked yet', (s) => s.kept);
}
