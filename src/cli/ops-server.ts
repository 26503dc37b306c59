import Fastify from 'fastify';
import { registerOps } from '../gateway/http/routes/health.js';
import type { GatewayMetrics } from '../gateway/http/helpers/metrics.js';

/** A running operations server. */
export interface OpsServer {
  port: number;
  close(): Promise<void>;
}

/**
 * `/healthz`, `/readyz` and `/metrics` for a process that has no gateway (`sagaway runner`,
 * DESIGN §9), on `port` (0 = any free port). `metrics` holds the registry that is served.
 */
export async function startOpsServer(
  port: number,
  host: string,
  ready: () => Promise<Record<string, boolean>>,
  metrics: GatewayMetrics,
): Promise<OpsServer> {
  const app = Fastify({ logger: false });
  registerOps(app, metrics, ready);
  await app.listen({ port, host });
  const address = app.server.address();
  return {
    port: typeof address === 'object' && address !== null ? address.port : port,
    close: () => app.close(),
  };
}
