import type { Settings } from '../config/settings.js';
import { startProcessTracing } from './tracing.js';
import { SagawayError } from '../core/errors.js';
import { createLogger } from '../core/logger.js';
import { BUILTIN_HANDLERS } from '../handlers/index.js';
import { GatewayMetrics } from '../gateway/http/helpers/metrics.js';
import { Host } from '../runner/host.js';
import { clusterMetrics, engineMetrics, runnerMetrics } from '../runner/metrics.js';
import { waitMetrics } from '../runner/waits/metrics.js'; // waits:
import { createState } from '../states/index.js';
import { createCluster } from '../systems/index.js';
import { noPositionals, type CliOptions } from './args.js';
import { configPath, loadChecked } from './load.js';
import { startOpsServer } from './ops-server.js';
import { releaseYoungGeneration } from '../core/young-generation.js';
import { parsePort, untilStopped } from './port.js';
import { traceMasker } from '../gateway/console/mask.js';

/**
 * `sagaway runner --config FILE --runner NAME [--deployment ID] [--port N]` (DESIGN §9): one
 * replica of one deployment of a runner. It serves the gateway's saga requests for NAME and the
 * events of the streams NAME consumes, over NATS; start as many replicas as needed. Health and
 * metrics are served on `--port`, else a free port (logged).
 */
export async function runnerCommand(options: CliOptions, positionals: string[]): Promise<number> {
  noPositionals('runner', positionals);
  const file = configPath(options.config, false);
  if (!file) throw new SagawayError('CONFIG_INVALID', 'runner needs --config FILE (or ./sagaway.yaml)');
  const name = options.runner;
  if (!name) throw new SagawayError('CONFIG_INVALID', 'runner needs --runner NAME');
  const loaded = await loadChecked(file);
  const log = createLogger().child({ runner: name });
  for (const w of loaded.warnings) log.warn({ file: w.file, line: w.line, path: w.path }, w.message);
  const settings = withDeployment(loaded.settings, name, options.deployment);
  if (!Object.values(settings.systems).some((s) => s.type === 'nats')) {
    throw new SagawayError(
      'CONFIG_INVALID',
      'a runner process needs a nats system to be reached (or use `sagaway start`)',
    );
  }
  const stopTracing = await startProcessTracing(settings, log);
  const metrics = new GatewayMetrics({ defaultMetrics: true });
  const host = await Host.start({
    settings,
    log,
    runners: [name],
    builtins: BUILTIN_HANDLERS,
    createState,
    createCluster,
    serveRequests: true,
    observer: runnerMetrics(metrics.registry),
    engineObserver: engineMetrics(metrics.registry),
    // what this runner publishes for a console over NATS is masked as the console masks
    traceMask: traceMasker(settings),
  });
  if (host.cluster) clusterMetrics(metrics.registry, host.cluster);
  if (host.waits.stores.size > 0) waitMetrics(metrics.registry, () => host.waits.stats()); // waits:
  const ops = await startOpsServer(
    parsePort(options.port) ?? 0,
    options.host ?? settings.gateway.host,
    () => host.ready(),
    metrics,
  );
  releaseYoungGeneration();
  log.info(
    { port: ops.port, config: file, deployment: settings.runners[name]!.deployment, instance: host.instance },
    'sagaway runner started',
  );

  await untilStopped((signal) => log.info({ signal }, 'stopping'));
  await host.close();
  await ops.close();
  await stopTracing();
  log.flush();
  return 0;
}

/** The settings with runner `name`'s deployment replaced by `--deployment`. */
function withDeployment(settings: Settings, name: string, deployment: string | undefined): Settings {
  const runner = settings.runners[name];
  if (!runner) throw new SagawayError('CONFIG_INVALID', `no runner "${name}" in the configuration`);
  if (deployment === undefined || deployment === runner.deployment) return settings;
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(deployment)) {
    throw new SagawayError('CONFIG_INVALID', `invalid deployment id "${deployment}"`);
  }
  return Object.freeze({
    ...settings,
    runners: Object.freeze({ ...settings.runners, [name]: Object.freeze({ ...runner, deployment }) }),
  });
}
