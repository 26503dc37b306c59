import type { NatsConnection } from '@nats-io/transport-node';
import type { NatsSystemSettings } from '../../config/settings.js';
import type { Logger } from '../../core/logger.js';

/**
 * The first connection of a nats system, retried here rather than by nats.js
 * (waitOnFirstConnect), so that closing the system stops the attempts: a process whose broker is
 * down still exits when asked to. Later reconnections are nats.js's own (maxReconnectAttempts -1).
 * Resolves undefined when `closed()` turned true meanwhile.
 */
export async function connectUntilUp(
  settings: NatsSystemSettings,
  instance: string,
  log: Logger,
  closed: () => boolean,
): Promise<NatsConnection | undefined> {
  const { connect } = await import('@nats-io/transport-node');
  const options = {
    servers: [...settings.servers],
    name: `sagaway-${instance}`,
    ...(settings.user !== undefined ? { user: settings.user } : {}),
    ...(settings.pass !== undefined ? { pass: settings.pass } : {}),
    ...(settings.token !== undefined ? { token: settings.token } : {}),
    timeout: settings.connectTimeoutMs,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    reconnectJitter: 100,
    pingInterval: 10_000,
    // nats.js otherwise creates a RequestError and a TimeoutError, stack traces included, on
    // every request and JetStream publish in case one is needed later; only their messages
    // are used here, and the stacks were ≈ 15% of an orchestrator's CPU per event.
    noAsyncTraces: true,
  };
  for (let attempt = 0; ; attempt++) {
    if (closed()) return undefined;
    try {
      const nc = await connect(options);
      if (!closed()) return nc;
      await nc.close();
      return undefined;
    } catch (err) {
      if (attempt === 0)
        log.warn({ err: err instanceof Error ? err.message : String(err) }, 'NATS not reachable; retrying');
      // unref: a pause between attempts never keeps a stopping process alive
      await new Promise((r) => setTimeout(r, Math.min(2000, 250 * 2 ** Math.min(attempt, 3))).unref());
    }
  }
}
