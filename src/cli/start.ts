import { createLogger } from '../core/logger.js';
import { SagawayError } from '../core/errors.js';
import { createGateway } from '../gateway/server.js';
import { BUILTIN_HANDLERS } from '../handlers/index.js';
import { Host } from '../runner/host.js';
import { createState } from '../states/index.js';
import type { CliOptions } from './args.js';
import { configPath, loadChecked } from './load.js';

/**
 * `sagaway start [--config FILE] [--port N]`: the gateway and every runner of the file in one
 * process (embedded mode). Port: --port, else PORT, else gateway.port, else 8080.
 */
export async function startCommand(options: CliOptions): Promise<number> {
  const file = configPath(options.config, true) as string;
  const { settings, warnings } = await loadChecked(file);
  const log = createLogger();
  for (const w of warnings) log.warn({ file: w.file, line: w.line, path: w.path }, w.message);
  const port = parsePort(options.port ?? process.env['PORT']) ?? settings.gateway.port ?? 8080;
  const host = await Host.start({ settings, log, builtins: BUILTIN_HANDLERS, createState });
  const gateway = await createGateway({
    settings,
    service: host,
    log,
    ready: () => host.ready(),
    status: host.statusReader(),
  });
  const address = await gateway.listen(port, settings.gateway.host);
  log.info({ port: address.port, config: file, runners: [...host.runners.keys()] }, 'sagaway started');

  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      log.info({ signal }, 'stopping');
      resolve();
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
  await gateway.close();
  await host.close();
  log.flush();
  return 0;
}

function parsePort(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new SagawayError('VALIDATION_FAILED', `invalid port "${value}"`);
  return n;
}
