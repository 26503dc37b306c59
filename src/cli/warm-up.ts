import type { Settings } from '../config/settings.js';

/** How long after the gateway listens its deferred work starts, if no request started it. */
export const WARM_AFTER_LISTEN_MS = 200;

/**
 * What `sagaway start` and `sagaway gateway` leave until they listen (issue 23: /healthz answers
 * first): the sagas' input and output schemas are compiled a moment after, so that the first
 * request that checks one does not pay for loading Ajv. Never throws; the timer does not hold
 * the process open.
 */
export function warmAfterListen(settings: Settings): void {
  const runners = settings.runners ?? {};
  const declares = Object.values(runners).some((r) =>
    r.sagas.some((s) => s.inputSchema !== undefined || s.outputSchema !== undefined),
  );
  if (!declares) return;
  setTimeout(() => {
    import('../config/io-schemas.js').then(
      (m) => m.warmSagaSchemas(runners),
      () => undefined,
    );
  }, WARM_AFTER_LISTEN_MS).unref();
}
