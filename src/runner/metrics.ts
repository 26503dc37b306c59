import { Counter, Histogram, type Registry } from 'prom-client';
import type { EngineObserver } from '../saga/engine.js';
import type { Cluster, ServeObserver } from '../systems/system.js';

/**
 * Prometheus metrics of a runner process (`sagaway runner`): events it ran by stream and status
 * (and whether the delivery was a redelivery), and saga requests it answered by outcome. Label
 * values are bounded: stream names come from the configuration, statuses and outcomes are enums.
 */
export function runnerMetrics(registry: Registry): ServeObserver {
  const events = new Counter({
    name: 'sagaway_runner_events_total',
    help: 'Events run by this runner, by stream, status and redelivery',
    labelNames: ['stream', 'status', 'redelivered'],
    registers: [registry],
  });
  const eventSeconds = new Histogram({
    name: 'sagaway_runner_event_seconds',
    help: 'Time to run an event (the action and its settings), by stream',
    labelNames: ['stream'],
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30],
    registers: [registry],
  });
  const runs = new Counter({
    name: 'sagaway_runner_sagas_total',
    help: 'Saga requests from the gateway answered by this runner, by outcome',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const runSeconds = new Histogram({
    name: 'sagaway_runner_saga_seconds',
    help: 'Time to run a saga requested by the gateway',
    buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30],
    registers: [registry],
  });
  return {
    event(stream, status, seconds, redelivered) {
      events.inc({ stream, status, redelivered: redelivered ? 'true' : 'false' });
      eventSeconds.observe({ stream }, seconds);
    },
    run(outcome, seconds) {
      runs.inc({ outcome });
      runSeconds.observe(seconds);
    },
  };
}

interface TryCount {
  readonly labels: { saga: string; step: string; status: string; retry: 'true' | 'false' };
  /** tries not yet handed to prom-client */
  pending: number;
}

/** Tries counted by saga, step, status and retry, in nested maps (no key string per try). */
class TryCounts {
  private readonly bySaga = new Map<string, Map<string, Map<string, [TryCount?, TryCount?]>>>();
  private readonly all: TryCount[] = [];

  add(saga: string, step: string, status: string, retry: boolean): void {
    let bySteps = this.bySaga.get(saga);
    if (bySteps === undefined) this.bySaga.set(saga, (bySteps = new Map()));
    let byStatus = bySteps.get(step);
    if (byStatus === undefined) bySteps.set(step, (byStatus = new Map()));
    let pair = byStatus.get(status);
    if (pair === undefined) byStatus.set(status, (pair = [undefined, undefined]));
    const i = retry ? 1 : 0;
    let count = pair[i];
    if (count === undefined) {
      count = { labels: { saga, step, status, retry: retry ? 'true' : 'false' }, pending: 0 };
      pair[i] = count;
      this.all.push(count);
    }
    count.pending++;
  }

  /** Hand the tries counted since the last flush to `inc`. */
  flush(inc: (labels: TryCount['labels'], n: number) => void): void {
    for (const count of this.all) {
      if (count.pending === 0) continue;
      inc(count.labels, count.pending);
      count.pending = 0;
    }
  }
}

/**
 * Prometheus metrics of the saga engine (issue 12), for runner processes and `sagaway start`:
 * every try of an event step (a retried step counts one per try), every compensation, and how
 * failed runs' unwinds ended. Labels are saga and step ids, bounded by the configuration.
 */
export function engineMetrics(registry: Registry): EngineObserver {
  // Every event step's try passes here: it bumps a plain number, and prom-client is given the
  // new counts when /metrics is read (its label hashing and checks cost ≈ 0.3 µs per try, issue 23).
  const counted = new TryCounts();
  new Counter({
    name: 'sagaway_step_tries_total',
    help: 'Tries of event steps, by saga, step, status and whether it was a retry',
    labelNames: ['saga', 'step', 'status', 'retry'],
    registers: [registry],
    collect() {
      counted.flush((labels, n) => this.inc(labels, n));
    },
  });
  const undos = new Counter({
    name: 'sagaway_compensations_total',
    help: 'Compensations (undo events) run, after their own retries, by saga, step and status',
    labelNames: ['saga', 'step', 'status'],
    registers: [registry],
  });
  const unwinds = new Counter({
    name: 'sagaway_saga_unwinds_total',
    help: 'Failed saga runs whose registered compensations ran, by saga and result (COMPLETED, PARTIAL)',
    labelNames: ['saga', 'compensation'],
    registers: [registry],
  });
  return {
    tried(saga, step, status, attempt) {
      counted.add(saga, step, status, attempt > 1);
    },
    undone(saga, step, status) {
      undos.inc({ saga, step, status });
    },
    compensated(saga, compensation) {
      unwinds.inc({ saga, compensation });
    },
  };
}

/**
 * The cluster's self-checks on /metrics: `sagaway_transport_guards_off_total{guard}` counts the
 * connections whose library patch switched itself off (systems/nats/coalesce.ts: the nats.js
 * client is not the version it was written for), so an upgrade that silently loses it is seen.
 * Read when /metrics is scraped; the guard names are fixed by the transport.
 */
export function clusterMetrics(registry: Registry, cluster: Pick<Cluster, 'guardsOff'>): void {
  const seen = new Map<string, number>();
  new Counter({
    name: 'sagaway_transport_guards_off_total',
    help: 'Connections whose transport patch switched itself off (a library version it was not written for), by guard',
    labelNames: ['guard'],
    registers: [registry],
    collect() {
      for (const [guard, count] of Object.entries(cluster.guardsOff())) {
        const added = count - (seen.get(guard) ?? 0);
        if (added > 0) this.inc({ guard }, added);
        else if (!seen.has(guard)) this.inc({ guard }, 0);
        seen.set(guard, count);
      }
    },
  });
}
