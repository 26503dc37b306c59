import type { Subscription } from '@nats-io/transport-node';
import type { Logger } from '../../core/logger.js';
import { isObject } from '../../core/path.js';
import type { RunRecord, TraceBus, TraceSource } from '../../core/trace.js';
import type { Stoppable, TraceRelay, ValueMask } from '../system.js';
import { maskSnapshots } from '../trace-mask.js';
import type { NatsSystem } from './system.js';

/**
 * Run traces across processes (docs/console.md, Distributed mode), only with
 * `gateway.console.natsTraces: true` (else neither side is created): a gateway whose console is watched
 * publishes `P.console.watch` every WATCH_MS; a runner process that hears it listens to its own
 * TraceBus and publishes each traced run on `P.console.trace` (core NATS: fire and forget,
 * nothing stored), its snapshots masked as the console masks (maskSnapshots), until it has heard
 * no watch for EXPIRY_WATCHES intervals. So runners trace and
 * publish nothing while no console is open anywhere. The runner's TraceBus bounds the rate
 * (`gateway.console.sample`); each record is bounded in bytes: too large, its payload snapshots
 * are left out; still too large, it is dropped. A gateway checks the shape and size of what it
 * receives before showing it.
 */

/** How often a watched gateway says so. */
export const WATCH_MS = 2000;
/** Watches missed before a runner stops tracing. */
const EXPIRY_WATCHES = 3;
/** Bytes of one published trace record at most. */
export const MAX_TRACE_BYTES = 256 * 1024;

/** The subjects of one system's prefix. */
export function traceSubjects(prefix: string): { trace: string; watch: string } {
  return { trace: `${prefix}.console.trace`, watch: `${prefix}.console.watch` };
}

/** Subscribe once connected (now, or after the first connection). */
function whenUp(system: NatsSystem, subscribe: () => void): void {
  if (system.isConnected) subscribe();
  else
    system.whenConnected(async () => {
      subscribe();
    });
}

/** The JSON of a run, within MAX_TRACE_BYTES (snapshots left out if needed), or undefined. */
export function encodeRun(run: RunRecord, max = MAX_TRACE_BYTES): Uint8Array | undefined {
  let bytes = Buffer.from(JSON.stringify(run));
  if (bytes.length > max) {
    bytes = Buffer.from(JSON.stringify({ ...run, steps: run.steps.map(({ payload: _p, ...s }) => s) }));
  }
  return bytes.length <= max ? bytes : undefined;
}

/** A record from the broker, if it has the shape of one. */
export function decodeRun(data: Uint8Array): RunRecord | undefined {
  if (data.length > MAX_TRACE_BYTES) return undefined;
  let run: unknown;
  try {
    run = JSON.parse(Buffer.from(data).toString('utf8'));
  } catch {
    return undefined;
  }
  if (!isObject(run)) return undefined;
  const ok =
    typeof run['requestId'] === 'string' &&
    typeof run['runner'] === 'string' &&
    typeof run['sagaId'] === 'string' &&
    typeof run['outcome'] === 'string' &&
    typeof run['http'] === 'number' &&
    typeof run['at'] === 'number' &&
    Array.isArray(run['steps']) &&
    run['steps'].every((s) => isObject(s) && typeof s['step'] === 'string' && typeof s['status'] === 'string');
  return ok ? (run as unknown as RunRecord) : undefined;
}

/** Runner side: publish this process's traced runs while some console watches. */
export class TracePublisher implements Stoppable {
  private sub: Subscription | undefined;
  private stopListening: (() => void) | undefined;
  private expiry: NodeJS.Timeout | undefined;
  private readonly subjects: { trace: string; watch: string };

  constructor(
    private readonly system: NatsSystem,
    private readonly bus: TraceBus,
    private readonly log: Logger,
    private readonly watchMs = WATCH_MS,
    /** applied to every snapshot before it is published (maskSnapshots); default: as the runner made them */
    private readonly mask?: ValueMask,
  ) {
    this.subjects = traceSubjects(system.names.prefix);
  }

  /** Whether runs are being published now. */
  get publishing(): boolean {
    return this.stopListening !== undefined;
  }

  start(): void {
    whenUp(this.system, () => {
      if (this.sub) return;
      this.sub = this.system.subscribe(this.subjects.watch, {
        callback: (err) => {
          if (!err) this.watched();
        },
      });
    });
  }

  private watched(): void {
    this.stopListening ??= this.bus.listen((run) => this.publish(run));
    clearTimeout(this.expiry);
    this.expiry = setTimeout(() => this.quiet(), this.watchMs * EXPIRY_WATCHES);
    this.expiry.unref();
  }

  private quiet(): void {
    this.stopListening?.();
    this.stopListening = undefined;
  }

  private publish(run: RunRecord): void {
    const data = encodeRun(
      this.mask ? maskSnapshots(run, this.mask) : run,
      Math.min(MAX_TRACE_BYTES, this.system.maxPayload),
    );
    if (!data) {
      this.log.debug({ requestId: run.requestId }, 'trace record too large for the console; dropped');
      return;
    }
    try {
      this.system.publish(this.subjects.trace, data);
    } catch {
      // The connection is down: a console misses this run, nothing else does.
    }
  }

  stop(): void {
    clearTimeout(this.expiry);
    this.quiet();
    this.sub?.unsubscribe();
    this.sub = undefined;
  }
}

/** Gateway side: the runners' traces, asked for only while someone listens (the console is watched). */
export class TraceSubscriber implements TraceSource {
  private readonly listeners = new Set<(run: RunRecord) => void>();
  private sub: Subscription | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly subjects: { trace: string; watch: string };

  constructor(
    private readonly system: NatsSystem,
    private readonly watchMs = WATCH_MS,
  ) {
    this.subjects = traceSubjects(system.names.prefix);
  }

  listen(listener: (run: RunRecord) => void): () => void {
    this.listeners.add(listener);
    if (this.listeners.size === 1) this.open();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.close();
    };
  }

  private open(): void {
    const watch = () => {
      try {
        this.system.publish(this.subjects.watch);
      } catch {
        // down: the next interval tries again
      }
    };
    whenUp(this.system, () => {
      if (this.sub || this.listeners.size === 0) return;
      this.sub = this.system.subscribe(this.subjects.trace, {
        callback: (err, msg) => {
          const run = err ? undefined : decodeRun(msg.data);
          if (run) for (const l of this.listeners) l(run);
        },
      });
      watch();
    });
    this.timer = setInterval(watch, this.watchMs);
    this.timer.unref();
  }

  private close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.sub?.unsubscribe();
    this.sub = undefined;
  }
}

/** The trace relay of the cluster port (system.ts TraceRelay) over one nats system. */
export function natsTraceRelay(system: NatsSystem, log: Logger): TraceRelay {
  return {
    publish(bus, mask) {
      const publisher = new TracePublisher(system, bus, log, undefined, mask);
      publisher.start();
      return publisher;
    },
    source: () => new TraceSubscriber(system),
  };
}
