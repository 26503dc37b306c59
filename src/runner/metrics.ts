import { Counter, Histogram, type Registry } from 'prom-client';
import type { ServeObserver } from '../systems/nats/serve.js';

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
