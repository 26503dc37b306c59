import { SagawayError } from '../core/errors.js';
import { createLogger } from '../core/logger.js';
import type { NatsSystem } from '../systems/nats/system.js';
import type { CliOptions } from './args.js';
import { configPath, loadChecked } from './load.js';

/**
 * `sagaway admin consumers|remove-consumers|runs --config FILE` (docs/cli.md): operations on a
 * running distributed deployment, through its nats system. Output is a table on stdout (or JSON
 * with --json); diagnostics go to stderr. Exit codes: 0 done, 1 something was left undone
 * (remove-consumers kept a consumer), 2 usage or configuration error, 3 NATS not reachable.
 */

/** Exit code when the broker cannot be reached. */
export const EXIT_UNREACHABLE = 3;
/** How long the command tries to connect. */
const CONNECT_WAIT_MS = 5000;
/** How long it listens for runner advertisements and answers (runners answer a query at once). */
const LISTEN_MS = Number(process.env['SAGAWAY_ADMIN_LISTEN_MS'] ?? 1000);

const SUBCOMMANDS = ['consumers', 'remove-consumers', 'runs'] as const;

/** Run `sagaway admin SUBCOMMAND`. */
export async function adminCommand(options: CliOptions, positionals: string[]): Promise<number> {
  const [sub, ...extra] = positionals;
  if (!sub || !(SUBCOMMANDS as readonly string[]).includes(sub) || extra.length > 0) {
    throw new SagawayError(
      'VALIDATION_FAILED',
      `admin needs one of ${SUBCOMMANDS.join(', ')}${sub ? ` (not "${[sub, ...extra].join(' ')}")` : ''}`,
    );
  }
  const file = configPath(options.config, false);
  if (!file) throw new SagawayError('CONFIG_INVALID', 'admin needs --config FILE (or ./sagaway.yaml)');
  const { settings } = await loadChecked(file);
  const { NatsHub } = await import('../systems/nats/hub.js');
  const log = createLogger({ fd: 2, level: process.env['LOG_LEVEL'] ?? 'error' });
  const hub = new NatsHub(settings, log);
  const system = options.system !== undefined ? hub.systems.get(options.system) : hub.gatewaySystem();
  if (!system) {
    throw new SagawayError(
      'CONFIG_INVALID',
      options.system !== undefined ? `no nats system "${options.system}"` : 'the configuration has no nats system',
    );
  }
  try {
    void system.start();
    const end = Date.now() + CONNECT_WAIT_MS;
    while (!system.isConnected && Date.now() < end) await sleep(25);
    if (!system.isConnected) {
      process.stderr.write(
        `sagaway admin: NATS of system "${system.name}" not reachable (${system.settings.servers.join(', ')})\n`,
      );
      return EXIT_UNREACHABLE;
    }
    // Runners answer the advertisement query sent at connect at once.
    await sleep(LISTEN_MS);
    if (sub === 'runs') return await runs(system, options);
    return await consumers(system, options, sub === 'remove-consumers');
  } finally {
    await hub.close();
    log.flush();
  }
}

async function consumers(system: NatsSystem, options: CliOptions, remove: boolean): Promise<number> {
  const { listConsumers, deleteConsumer } = await import('../systems/nats/admin.js');
  const rows = (await listConsumers(system)).filter(
    (r) =>
      (options.runner === undefined || r.runner === options.runner) &&
      (options.deployment === undefined || r.deployment === options.deployment),
  );
  if (!remove) {
    if (options.json) return print(JSON.stringify(rows, null, 2));
    const count = (s: string) => rows.filter((r) => r.state === s).length;
    table(
      ['STATE', 'RUNNER', 'DEPLOYMENT', 'STREAM', 'PENDING', 'ACK-PENDING', 'LAST-ACTIVE', 'CONSUMER'],
      rows.map((r) => [
        r.state,
        r.runner ?? '-',
        r.deployment ?? '-',
        r.stream ?? '-',
        String(r.pending),
        String(r.ackPending),
        r.lastActive ?? '-',
        r.name,
      ]),
    );
    return print(
      `${rows.length} consumer(s): ${count('live')} live, ${count('retired')} retired, ${count('foreign')} foreign`,
    );
  }
  const results: { name: string; runner?: string; deployment?: string; stream?: string; result: string }[] = [];
  let undone = 0;
  for (const r of rows.filter((row) => row.state === 'retired')) {
    const waiting = r.pending + r.ackPending;
    let result: string;
    if (waiting > 0 && !options.force) {
      result = `kept: ${waiting} event(s) waiting (--force removes them too)`;
      undone++;
    } else if (options['dry-run']) {
      result = 'would remove';
    } else {
      try {
        await deleteConsumer(system, r.name);
        result = waiting > 0 ? `removed, with ${waiting} event(s)` : 'removed';
      } catch (err) {
        result = `not removed: ${(err as Error).message}`;
        undone++;
      }
    }
    results.push({
      name: r.name,
      ...(r.runner !== undefined ? { runner: r.runner, deployment: r.deployment, stream: r.stream } : {}),
      result,
    });
  }
  if (options.json) print(JSON.stringify(results, null, 2));
  else {
    table(
      ['RUNNER', 'DEPLOYMENT', 'STREAM', 'CONSUMER', 'RESULT'],
      results.map((r) => [r.runner ?? '-', r.deployment ?? '-', r.stream ?? '-', r.name, r.result]),
    );
    print(
      results.length === 0
        ? 'no consumer of a retired deployment'
        : `${results.length - undone} of ${results.length} done`,
    );
  }
  return undone > 0 ? 1 : 0;
}

async function runs(system: NatsSystem, options: CliOptions): Promise<number> {
  const { collectRuns } = await import('../systems/nats/admin.js');
  const answers = await collectRuns(system, LISTEN_MS * 2);
  const now = Date.now();
  const rows = answers.flatMap((a) =>
    a.runners
      .filter(
        (r) =>
          (options.runner === undefined || r.runner === options.runner) &&
          (options.deployment === undefined || r.deployment === options.deployment),
      )
      .map((r) => ({ instance: a.instance, ...r })),
  );
  if (options.json) return print(JSON.stringify(rows, null, 2));
  const listed = rows.flatMap((r) =>
    r.runs.map((run) => [
      r.runner,
      r.deployment,
      r.instance,
      run.saga,
      run.requestId,
      new Date(run.startedAt).toISOString(),
      `${((now - run.startedAt) / 1000).toFixed(1)}s`,
    ]),
  );
  table(['RUNNER', 'DEPLOYMENT', 'INSTANCE', 'SAGA', 'REQUEST-ID', 'STARTED', 'AGE'], listed);
  const total = rows.reduce((n, r) => n + r.count, 0);
  const more = total > listed.length ? ` (${total - listed.length} more not listed)` : '';
  return print(`${total} run(s) in flight in ${answers.length} runner process(es)${more}`);
}

/** Columns padded to their widest cell. */
function table(head: string[], rows: string[][]): void {
  if (rows.length === 0) return;
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  for (const r of [head, ...rows]) print(r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  '));
}

function print(line: string): number {
  process.stdout.write(`${line}\n`);
  return 0;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
