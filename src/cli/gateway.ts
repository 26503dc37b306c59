import { SagawayError } from '../core/errors.js';
import { startProcessTracing } from './tracing.js';
import { createLogger } from '../core/logger.js';
import { createGateway } from '../gateway/server.js';
import { JournalRunAdmin } from '../runner/orchestrator/run-admin.js';
import { runMetrics } from '../runner/orchestrator/run-metrics.js';
import { gatewaySignals } from '../runner/waits/host-waits.js'; // waits:
import { JournalReader } from '../runner/orchestrator/journal-reader.js';
import { clusterMetrics } from '../runner/metrics.js';
import { firstStatus } from '../runner/status.js';
import { createState } from '../states/index.js';
import type { State } from '../states/state.js';
import { createCluster } from '../systems/index.js';
import { warmAfterListen } from './warm-up.js';
import { releaseYoungGeneration, RELEASE_AFTER_LISTEN_MS } from '../core/young-generation.js';
import { noPositionals, type CliOptions } from './args.js';
import { configPath, loadChecked } from './load.js';
import { parsePort, untilStopped } from './port.js';
import { startedLine } from './started-line.js';

/**
 * `sagaway gateway --config FILE [--port N] [--host H]` (DESIGN §9): the gateway alone. Saga requests go
 * to the runners over NATS (the `defaultSystem` when it is a nats system, else the first nats
 * system); `/api/status` reads the runners' journals directly, else their outcome buckets on NATS.
 */
export async function gatewayCommand(options: CliOptions, positionals: string[]): Promise<number> {
  noPositionals('gateway', positionals);
  const file = configPath(options.config, false);
  if (!file) throw new SagawayError('CONFIG_INVALID', 'gateway needs --config FILE (or ./sagaway.yaml)');
  const { settings, warnings } = await loadChecked(file);
  const log = createLogger();
  for (const w of warnings) log.warn({ file: w.file, line: w.line, path: w.path }, w.message);
  const stopTracing = await startProcessTracing(settings, log);
  const cluster = await createCluster(settings, log, { gatewayOnly: true });
  if (!cluster) {
    throw new SagawayError(
      'CONFIG_INVALID',
      'the gateway alone needs a nats system to reach its runners (or use `sagaway start`)',
    );
  }
  cluster.start();

  // The journals the runners write: the gateway reads them for /api/status.
  const journals: State[] = [];
  for (const alias of new Set(Object.values(settings.runners).map((r) => r.journal))) {
    const st = alias === undefined ? undefined : settings.states[alias];
    if (!st) continue;
    const state = createState(st, log);
    await state.init().catch(() => log.warn({ state: alias }, 'journal unavailable at start; will retry on use'));
    journals.push(state);
  }
  const ready = async () => {
    const out: Record<string, boolean> = cluster.ready();
    await Promise.all(
      journals.map(async (j) => {
        out[`state:${j.alias}`] = await j.ping().then(
          () => true,
          () => false,
        );
      }),
    );
    return out;
  };
  const port = parsePort(options.port ?? process.env['PORT']) ?? settings.gateway.port ?? 8080;
  // The console's live runs: the runners relay their traces over the cluster while it is watched,
  // and only when the file says so (gateway.console.natsTraces): by default no trace crosses the broker.
  const relay = settings.gateway.console.natsTraces ? cluster.traces() : undefined;
  const waits = gatewaySignals(settings); // waits: signals and callbacks of parked runs
  const runs = journals.length > 0 ? new JournalRunAdmin(settings, journals) : undefined;
  const gateway = await createGateway({
    settings,
    service: cluster,
    waits: waits.signals, // waits:
    log,
    ready,
    status: firstStatus([new JournalReader(journals), cluster.outcomeReader()]),
    ...(runs ? { runs } : {}),
    traces: relay ? [relay.source()] : [],
  });
  clusterMetrics(gateway.metrics.registry, cluster);
  if (runs) runMetrics(gateway.metrics.registry, runs); // runs: suspended runs
  const host = options.host ?? settings.gateway.host;
  const address = await gateway.listen(port, host);
  warmAfterListen(settings);
  releaseYoungGeneration(RELEASE_AFTER_LISTEN_MS);
  const line = startedLine(settings, host, address.port);
  log.info({ console: line.console }, line.message);
  log.info(
    {
      host,
      port: address.port,
      config: file,
      instance: cluster.directory.instance,
      console: line.console,
      apis: line.apis,
    },
    'sagaway gateway started',
  );

  await untilStopped((signal) => log.info({ signal }, 'stopping'));
  await gateway.close();
  await cluster.close();
  await stopTracing();
  await waits.close(); // waits:
  await Promise.all(journals.map((j) => j.close().catch(() => undefined)));
  log.flush();
  return 0;
}
