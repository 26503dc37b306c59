import { keepBounded } from '../core/bounded-map.js';
import type { RunRecord, TraceBus, TraceSource } from '../core/trace.js';
import type { SagaResult } from '../core/types.js';
import type { OutcomeStatus } from '../core/messages.js';
import type {
  OutcomeHandle,
  OutcomeLookup,
  OutcomeWriter,
  RecordedRunner,
  Stoppable,
  TraceRelay,
  ValueMask,
} from './system.js';
import { maskSnapshots } from './trace-mask.js';

/**
 * The cluster port's services in one process (local.ts LocalCluster): outcomes in memory, and a
 * trace relay from a process's TraceBus to its own listeners. Nothing crosses a process.
 */

/** Runs kept at most (the oldest go first): memory stays bounded whatever the TTL. */
const MAX_KEPT = 10_000;

interface Kept {
  status: OutcomeStatus;
  expiresAt: number;
}

/** Outcomes of the runners of one process, by caller scope and run id (and correlation id, first run wins). */
export class MemoryOutcomes implements OutcomeLookup {
  private readonly runs = new Map<string, Kept>();
  private readonly byCorrelation = new Map<string, { requestId: string; expiresAt: number }>();

  /** The writing side for one runner. */
  writer(runner: RecordedRunner): OutcomeWriter {
    return {
      ready: true,
      begin: (scope, requestId, correlationId) => {
        const now = new Date().toISOString();
        const key = `${scope}\0${requestId}`;
        const expiresAt = Date.now() + runner.statusTtlMs;
        const status: OutcomeStatus = { requestId, status: 'RUNNING', startedAt: now, updatedAt: now };
        if (correlationId !== undefined) {
          status.correlationId = correlationId;
          const index = `${scope}\0${correlationId}`;
          if (!this.live(this.byCorrelation.get(index))) this.keep(this.byCorrelation, index, { requestId, expiresAt });
        }
        this.keep(this.runs, key, { status, expiresAt });
        return { key };
      },
      end: (handle: OutcomeHandle, result: SagaResult) => {
        const kept = this.runs.get(handle.key);
        if (!kept) return;
        const size = result.response === undefined ? 0 : Buffer.byteLength(JSON.stringify(result.response) ?? '');
        kept.status = {
          ...kept.status,
          status: 'DONE',
          outcome: result.outcome,
          http: result.http,
          // the same cap as a bucket's value (runners.R.statusMaxSize): the response is left out past it
          ...(result.response === undefined
            ? {}
            : size > runner.statusMaxBytes
              ? { responseOmitted: size }
              : { response: result.response }),
          ...(result.error ? { error: result.error } : {}),
          updatedAt: new Date().toISOString(),
        };
        kept.expiresAt = Date.now() + runner.statusTtlMs;
      },
    };
  }

  async lookup(
    scope: string,
    id: string,
    options: { byCorrelation?: boolean } = {},
  ): Promise<OutcomeStatus | undefined> {
    const run = this.runs.get(`${scope}\0${id}`);
    if (this.live(run)) return run.status;
    if (options.byCorrelation !== true) return undefined;
    const index = this.byCorrelation.get(`${scope}\0${id}`);
    if (!this.live(index)) return undefined;
    const found = this.runs.get(`${scope}\0${index.requestId}`);
    return this.live(found) ? found.status : undefined;
  }

  private live<T extends { expiresAt: number }>(entry: T | undefined): entry is T {
    return entry !== undefined && entry.expiresAt > Date.now();
  }

  private keep<T>(map: Map<string, T>, key: string, value: T): void {
    keepBounded(map, key, value, MAX_KEPT);
  }
}

/** The traces of a process's TraceBus, relayed to listeners of the same process while any listens. */
export class LocalTraceRelay implements TraceRelay {
  private readonly listeners = new Set<(run: RunRecord) => void>();

  publish(bus: TraceBus, mask?: ValueMask): Stoppable {
    // Listen to the bus only while someone listens here: an unwatched bus traces nothing.
    let stop: (() => void) | undefined;
    const relay = (run: RunRecord) => {
      const shown = mask ? maskSnapshots(run, mask) : run;
      for (const l of this.listeners) l(shown);
    };
    const sync = () => {
      if (this.listeners.size > 0) stop ??= bus.listen(relay);
      else {
        stop?.();
        stop = undefined;
      }
    };
    this.watchers.add(sync);
    sync();
    return {
      stop: () => {
        this.watchers.delete(sync);
        stop?.();
        stop = undefined;
      },
    };
  }

  source(): TraceSource {
    return {
      listen: (listener) => {
        this.listeners.add(listener);
        this.changed();
        return () => {
          this.listeners.delete(listener);
          this.changed();
        };
      },
    };
  }

  private readonly watchers = new Set<() => void>();

  private changed(): void {
    for (const w of this.watchers) w();
  }
}
