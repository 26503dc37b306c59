import type { Settings } from '../config/settings.js';
import type { Logger } from '../core/logger.js';
import { installTracing, tracing } from '../core/otel.js';
import { resolveTracing } from '../systems/otel/config.js';
import { packageVersion } from './package-info.js';

/**
 * Start tracing for this process when `observability.tracing` or the `OTEL_*` variables say so
 * (docs/tracing.md); before the gateway and runners are built. Off: nothing is imported, and the
 * returned stop does nothing. The SDK is loaded here, lazily, and only then.
 */
export async function startProcessTracing(settings: Settings, log: Logger): Promise<() => Promise<void>> {
  const config = resolveTracing(settings.observability?.tracing);
  if (config === undefined) return () => Promise.resolve();
  const { startTracing } = await import('../systems/otel/sdk.js');
  // The batch's timing follows the SDK's own OTEL_BSP_* variables.
  installTracing(await startTracing(config, { version: packageVersion() }));
  // The endpoint is logged without its query or credentials; the headers are never logged.
  log.info(
    { endpoint: redactedUrl(config.url), service: config.serviceName, sampleRatio: config.sampleRatio },
    'tracing on',
  );
  return async () => {
    const t = tracing.current;
    installTracing(undefined);
    await t?.shutdown().catch((err: unknown) => log.warn({ err }, 'flushing the last spans failed'));
  };
}

function redactedUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(invalid)';
  }
}
