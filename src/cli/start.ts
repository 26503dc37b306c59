import { createLogger } from '../core/logger.js';
import { startProcessTracing } from './tracing.js';
import { createGateway } from '../gateway/server.js';
import { BUILTIN_HANDLERS } from '../handlers/index.js';
import { Host } from '../runner/host.js';
import { clusterMetrics, engineMetrics } from '../runner/metrics.js';
import { createState } from '../states/index.js';
import { createCluster } from '../systems/index.js';
import { warmAfterListen } from './warm-up.js';
import { releaseYoungGeneration, RELEASE_AFTER_LISTEN_MS } from '../core/young-generation.js';
import { noPositionals, type CliOptions } from './args.js';
import { configPath, loadChecked } from './load.js';
import { parsePort } from './port.js';
import { startedLine } from './started-line.js';
import { traceMasker } from '../gateway/console/mask.js';
import { withEmbeddedJournal } from '../runner/waits/check.js'; // waits:
import { waitMetrics } from '../runner/waits/metrics.js'; // waits:
import { runMetrics } from '../runner/orchestrator/run-metrics.js';

/**
 * `sagaway start [--config FILE] [--port N] [--host H]`: the gateway and every runner of the file
 * in one process (embedded mode). Port: --port, else PORT, else gateway.port, else 8080. Host:
 * --host, else gateway.host (default 127.0.0.1).
 */
export async function startCommand(options: CliOptions, positionals: string[]): Promise<number> {
  noPositionals('start', positionals);
  const file = configPath(options.config, true) as string;
  const loaded = await loadChecked(file);
  const { warnings } = loaded;
  // waits: a runner with a wait step and no journal gets a SQLite one (runner/waits/check.ts)
  const settings = withEmbeddedJournal(loaded.settings);
  const log = createLogger();
  for (const w of warnings) log.warn({ file: w.file, line: w.line, path: w.path }, w.message);
  const port = parsePort(options.port ?? process.env['PORT']) ?? settings.gateway.port ?? 8080;
  const stopTracing = await startProcessTracing(settings, log);
  const host = await Host.start({
    settings,
    log,
    builtins: BUILTIN_HANDLERS,
    createState,
    createCluster,
    // what this process publishes for a console over NATS is masked as the console masks
    traceMask: traceMasker(settings),
  });
  const runs = host.runAdmin();
  const gateway = await createGateway({
    settings,
    service: host,
    log,
    ready: () => host.ready(),
    status: host.statusReader(),
    ...runs,
    traces: [host.traces],
    waits: host.waits.signals(), // waits:
  });
  // the engine's tries and compensations, on the gateway's /metrics (one process, one registry)
  const engine = engineMetrics(gateway.metrics.registry);
  for (const runner of host.runners.values()) runner.observe(engine);
  if (host.cluster) clusterMetrics(gateway.metrics.registry, host.cluster);
  if (runs.runs) runMetrics(gateway.metrics.registry, runs.runs); // runs: suspended runs
  if (host.waits.stores.size > 0) waitMetrics(gateway.metrics.registry, () => host.waits.stats()); // waits:
  const listenHost = options.host ?? settings.gateway.host;
  const address = await gateway.listen(port, listenHost);
  warmAfterListen(settings);
  releaseYoungGeneration(RELEASE_AFTER_LISTEN_MS);
  const line = startedLine(settings, listenHost, address.port);
  log.info({ console: line.console }, line.message);
  log.info(
    {
      host: listenHost,
      port: address.port,
      config: file,
      runners: [...host.runners.keys()],
      console: line.console,
      apis: line.apis,
    },
    'sagaway started',
  );

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
  await stopTracing();
  log.flush();
  return 0;
}
