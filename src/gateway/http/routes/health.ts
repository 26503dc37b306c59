import type { FastifyInstance } from 'fastify';
import type { GatewayMetrics } from '../helpers/metrics.js';

/**
 * Operations endpoints (DESIGN §9): `/healthz` (the process answers), `/readyz` (every check of
 * the `ready` callback is true; 503 otherwise, or when the callback fails or takes over
 * READY_TIMEOUT_MS) and `/metrics` (Prometheus text).
 */

/** How long /readyz waits for the readiness callback. */
export const READY_TIMEOUT_MS = 5000;

/** Register the operations routes. */
export function registerOps(
  app: FastifyInstance,
  metrics: GatewayMetrics,
  ready: (() => Promise<Record<string, boolean>>) | undefined,
): void {
  app.get('/healthz', async (_request, reply) => reply.type('application/json').send('{"status":"ok"}'));

  app.get('/readyz', async (request, reply) => {
    let checks: Record<string, boolean> = {};
    let ok = true;
    if (ready) {
      let timer: NodeJS.Timeout | undefined;
      try {
        checks = await Promise.race([
          ready(),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error('readiness check timed out')), READY_TIMEOUT_MS);
          }),
        ]);
        ok = Object.values(checks).every((v) => v === true);
      } catch (err) {
        request.log.warn({ err }, 'readiness check failed');
        ok = false;
      } finally {
        clearTimeout(timer);
      }
    }
    return reply
      .code(ok ? 200 : 503)
      .type('application/json')
      .send(JSON.stringify({ status: ok ? 'ready' : 'unavailable', checks }));
  });

  app.get('/metrics', async (_request, reply) => {
    const text = await metrics.registry.metrics();
    return reply.type(metrics.registry.contentType).send(text);
  });
}
