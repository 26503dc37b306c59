import { randomBytes } from 'node:crypto';
import type { RunnerSettings, Settings, StateSettings } from '../config/settings.js';
import { compileMasker } from '../core/sensitive.js';
import type { Cancellable } from '../core/cancel.js';
import { SagawayError, toErrorInfo } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { SagaRequest, SagaResult } from '../core/types.js';
import type { State } from '../states/state.js';
import { TraceBus } from '../core/trace.js';
import { LocalCluster } from '../systems/local.js';
import {
  type Cluster,
  type CreateCluster,
  type OutcomeWriter,
  type ServeObserver,
  type Stoppable,
  type ValueMask,
} from '../systems/system.js';
import type { EventMessage, EventReply, SagaService, StatusSource } from '../core/messages.js';
import type { HandlerFactory } from '../handlers/api.js';
import type { EngineObserver } from '../saga/engine.js';
import { Journal } from './orchestrator/journal.js';
import { JournalReader } from './orchestrator/journal-reader.js';
import { HandlerRegistry, importHandlerModule, isModuleEntry } from './executor/registry.js';
import { Runner } from './orchestrator/runner.js';
import { createSecretSource, type SecretSource } from './executor/secrets.js';
import { firstStatus } from './status.js';
import type { RunAdmin } from '../core/runs.js';
import { JournalRunAdmin } from './orchestrator/run-admin.js';
import { HostWaits, type WaitClock } from './waits/host-waits.js'; // waits:

/** What a process hosting runners is built from. */
export interface HostOptions {
  settings: Settings;
  log: Logger;
  /** runners to host; default all of the file (embedded mode) */
  runners?: readonly string[];
  /** built-in handler factories by name */
  builtins: Readonly<Record<string, HandlerFactory>>;
  /** makes a state from its settings (src/states/index.ts createState) */
  createState: (settings: StateSettings, log: Logger) => State;
  /** makes the cluster of the file's remote systems (src/systems/index.ts createCluster): the runner imports no transport */
  createCluster: CreateCluster;
  /** default: from settings.secrets */
  secrets?: SecretSource;
  /** serve the hosted runners' gateway requests over the cluster (the `runner` command); default false */
  serveRequests?: boolean;
  /** metrics hooks of the cluster's serving side */
  observer?: ServeObserver;
  /** metrics hooks of the saga engine (tries, compensations) */
  engineObserver?: EngineObserver;
  /**
   * masks each payload snapshot this process relays to a console elsewhere: the console's
   * own masking (gateway/console/mask.ts `masked`), handed in by the command line so that the
   * runner does not depend on the gateway. Default: the snapshots as core/trace.ts masks them.
   */
  traceMask?: ValueMask;
  /** waits: the clock of wait steps' due times and the pollers; default the real one (tests move it) */
  waitClock?: WaitClock;
}

/** How often finished runs past their retention are removed from the journals (runner.pruneJournal). */
const PRUNE_INTERVAL_MS = 60_000;

/**
 * The runners of one process, with the states, secrets and the `local` system they share.
 * `service` is what a gateway in the same process calls.
 */
export class Host implements SagaService {
  readonly runners = new Map<string, Runner>();
  /** the runners of this process, reached in process (systems/local.ts) */
  readonly local: LocalCluster;
  /** the remote systems of this process (NATS), when the configuration has any */
  cluster: Cluster | undefined;
  /** relays traced runs to watching consoles elsewhere (gateway.console.natsTraces) */
  private tracePublisher: Stoppable | undefined;
  /** id of this process (journal owner, NATS reply routes) */
  readonly instance: string;
  /** run traces of the hosted runners (the console listens; nothing is traced otherwise) */
  readonly traces: TraceBus;
  private readonly states = new Map<string, State>();
  private resumeTimer: NodeJS.Timeout | undefined;
  private resuming = false;
  /** the orphan scan (startResumer), and whether it was asked for again while it ran */
  private scan: (() => Promise<void>) | undefined;
  private again = false;
  /** when the journals are pruned next (with the orphan scan, at most every PRUNE_INTERVAL_MS) */
  private pruneAt = 0;
  private closed = false;
  /** waits: the wait stores, pollers and callback tokens of this process (runner/waits/) */
  readonly waits: HostWaits;

  private constructor(private readonly options: HostOptions) {
    this.waits = new HostWaits(options.settings, options.log, options.waitClock); // waits:
    const shown = options.settings.gateway.console;
    this.traces = new TraceBus(shown.snapshotBytes, shown.sample, compileMasker(shown.mask));
    this.instance = randomBytes(9).toString('base64url').replace(/[-_]/g, 'x');
    this.local = new LocalCluster(this.instance, options.log);
  }

  /** Build every runner, open every state, load every handler; throws on configuration errors. */
  static async start(options: HostOptions): Promise<Host> {
    const host = new Host(options);
    try {
      await host.openStates();
      host.cluster = await options.createCluster(options.settings, options.log, { instance: host.instance });
      if (host.cluster) {
        host.cluster.start();
        // A console watched on a gateway elsewhere asks for this process's traces, when the file
        // lets traces cross the broker (gateway.console.natsTraces; default off).
        if (options.settings.gateway.console.natsTraces)
          host.tracePublisher = host.cluster.traces()?.publish(host.traces, options.traceMask);
      }
      const secrets = options.secrets ?? createSecretSource(options.settings.secrets);
      const names = options.runners ?? Object.keys(options.settings.runners);
      for (const name of names) {
        const settings = options.settings.runners[name];
        if (!settings) throw new SagawayError('CONFIG_INVALID', `no runner "${name}" in the configuration`);
        const runner = await host.buildRunner(settings, secrets);
        host.runners.set(name, runner);
      }
      host.local.serve([...host.runners.values()]);
      host.cluster?.serve([...host.runners.values()], options.serveRequests ?? false, options.observer);
      host.startResumer();
      host.startWaits(); // waits:
    } catch (e) {
      await host.close();
      throw e;
    }
    return host;
  }

  /** Run a saga on a runner of this process. */
  run(runner: string, req: SagaRequest): Promise<SagaResult> {
    return this.local.run(runner, req);
  }

  /** Wait until every remote system is connected, at most `timeoutMs`; resolves whether they are. */
  async systemsConnected(timeoutMs: number): Promise<boolean> {
    const end = Date.now() + timeoutMs;
    while (this.cluster && !this.cluster.connected) {
      if (Date.now() >= end) return false;
      await new Promise((r) => setTimeout(r, 25));
    }
    return true;
  }

  /** The journals of the hosted runners, then the outcome buckets (distributed mode), for the status endpoint. */
  statusReader(): StatusSource {
    const aliases = new Set(
      [...this.runners.keys()].map((n) => this.options.settings.runners[n]?.journal).filter((a) => a !== undefined),
    );
    return firstStatus([new JournalReader([...aliases].map((a) => this.state(a))), this.cluster?.outcomeReader()]);
  }

  /**
   * The run routes' journal side (GET /api/runs, redrive, abort: run-admin.ts), when a hosted
   * runner journals; a redrive or abort written here is picked up by this process's next scan,
   * made at once.
   */
  runAdmin(): { runs?: RunAdmin } {
    const aliases = new Set(
      [...this.runners.keys()].map((n) => this.options.settings.runners[n]?.journal).filter((a) => a !== undefined),
    );
    if (aliases.size === 0) return {};
    const states = [...aliases].map((a) => this.state(a));
    return { runs: new JournalRunAdmin(this.options.settings, states, Date.now, () => this.scanSoon()) };
  }

  /** Scan the journals now (a redrive or abort was written): soon after the scan running, if one is. */
  private scanSoon(): void {
    const scan = this.scan;
    if (scan) setTimeout(() => void scan(), 0).unref();
  }

  /**
   * Look for journaled runs whose process is gone, now and then, per the cluster's process
   * directory. With NATS, a process is gone when its advertisements stopped; the first look waits
   * for one advertisement round so that live processes are known. Without a remote cluster, this
   * process owns the journal alone: whatever is RUNNING at start was left by a previous life. One
   * scan covers every hosted runner, as often as the shortest `resumeInterval` of those with a
   * journal asks.
   */
  private startResumer(): void {
    const intervals = [...this.runners]
      .filter(([, runner]) => runner.journaled)
      .map(([name]) => this.options.settings.runners[name]!.resumeIntervalMs);
    if (intervals.length === 0) return;
    const interval = Math.min(...intervals);
    const cluster = this.cluster ?? this.local;
    const directory = cluster.directory;
    const scan = async (): Promise<void> => {
      if (this.resuming) this.again = true;
      if (this.resuming || this.closed || !cluster.connected) return;
      this.resuming = true;
      this.again = false;
      try {
        await Promise.all(
          [...this.runners.values()].map((r) => r.resumeOrphans((instance) => directory.isLive(instance))),
        );
        if (Date.now() >= this.pruneAt) {
          this.pruneAt = Date.now() + PRUNE_INTERVAL_MS;
          await Promise.all([...this.runners.values()].map((r) => r.pruneJournal()));
        }
      } catch (err) {
        this.options.log.warn({ err: toErrorInfo(err) }, 'journal scan failed; will retry');
      } finally {
        this.resuming = false;
      }
      // a redrive asked for a scan while this one ran (scanSoon)
      if (this.again) void scan();
    };
    this.scan = scan;
    const first = directory.advertiseIntervalMs > 0 ? directory.advertiseIntervalMs + 500 : 0;
    setTimeout(() => void scan(), first).unref();
    this.resumeTimer = setInterval(() => void scan(), interval);
    this.resumeTimer.unref();
  }

  /** waits: poll for due waits on every runner that parks (runner/waits/host-waits.ts). */
  private startWaits(): void {
    const parking = [...this.runners.values()].flatMap((r) => {
      const settings = this.options.settings.runners[r.name];
      const alias = settings?.journal;
      return r.parks && settings && alias !== undefined
        ? [{ ...r.waitRunner(), journalAlias: alias, pollMs: settings.waitPollMs, leaseMs: settings.waitLeaseMs }]
        : [];
    });
    this.waits.start(parking);
  }

  /** Readiness of every state and system (name -> reachable). */
  async ready(): Promise<Record<string, boolean>> {
    const out: Record<string, boolean> = { ...this.cluster?.ready() };
    await Promise.all(
      [...this.states].map(async ([alias, state]) => {
        try {
          await state.ping();
          out[`state:${alias}`] = true;
        } catch {
          out[`state:${alias}`] = false;
        }
      }),
    );
    return out;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.resumeTimer);
    await this.waits.close(); // waits: pollers stop, their resumes end, before the states close
    // detached onFail sagas finish while states and systems are still open
    await Promise.all([...this.runners.values()].map((r) => r.drain()));
    this.tracePublisher?.stop();
    await this.cluster?.close();
    await this.local.close();
    await Promise.all([...this.states.values()].map((s) => s.close().catch(() => undefined)));
    this.states.clear();
  }

  private async openStates(): Promise<void> {
    for (const [alias, st] of Object.entries(this.options.settings.states)) {
      const state = this.options.createState(st, this.options.log);
      this.states.set(alias, state);
      try {
        await state.init();
      } catch (e) {
        // A database that is down at start is not a configuration error: serve, answer 503, retry.
        if (e instanceof SagawayError && e.code === 'STATE_UNAVAILABLE') {
          this.options.log.warn({ state: alias }, 'state unavailable at start; will retry on use');
        } else throw e;
      }
    }
  }

  private state = (alias: string): State => {
    const s = this.states.get(alias);
    if (!s) throw new SagawayError('DOMAIN_NOT_FOUND', `no state "${alias}"`);
    return s;
  };

  private async buildRunner(settings: RunnerSettings, secrets: SecretSource): Promise<Runner> {
    const log = this.options.log.child({ runner: settings.name, deployment: settings.deployment });
    const registry = new HandlerRegistry();
    const runner = new Runner(
      {
        settings: this.options.settings,
        runner: settings,
        registry,
        secrets,
        log,
        state: this.state,
        route: (event, cancel) => this.route(event, cancel),
        ...(this.options.engineObserver ? { observer: this.options.engineObserver } : {}),
        ...this.outcomesOf(settings, log),
        traces: this.traces,
        ...(this.waits.bindingFor(settings) ? { waits: this.waits.bindingFor(settings)! } : {}), // waits:
        ...(settings.journal !== undefined
          ? {
              journal: new Journal(
                this.state(settings.journal),
                settings.name,
                settings.deployment,
                this.instance,
                log,
              ),
            }
          : {}),
      },
      settings.plans,
    );
    const env = runner.handlerEnv();
    for (const entry of settings.handlers) {
      if (isModuleEntry(entry)) {
        registry.add(await importHandlerModule(entry, env), entry);
      } else {
        const factory = this.options.builtins[entry];
        if (!factory) throw new SagawayError('CONFIG_INVALID', `unknown built-in handler "${entry}"`);
        registry.add(factory(env), entry);
      }
    }
    return runner;
  }

  /**
   * Distributed mode (a remote cluster carries gateway requests) without a journal: the runner
   * keeps its outcomes where a gateway elsewhere reads them for /api/status (with NATS, a
   * key-value bucket: systems/nats/outcomes.ts).
   */
  private outcomesOf(settings: RunnerSettings, log: Logger): { outcomes?: OutcomeWriter } {
    const cluster = this.cluster;
    // A runner without sagas is never asked to run one: it needs no bucket.
    if (!cluster || settings.journal !== undefined || settings.statusTtlMs <= 0 || settings.plans.length === 0)
      return {};
    const runner = {
      name: settings.name,
      deployment: settings.deployment,
      statusTtlMs: settings.statusTtlMs,
      statusMaxBytes: settings.statusMaxBytes,
    };
    const outcomes = cluster.outcomeWriter(runner, log);
    return outcomes ? { outcomes } : {};
  }

  /** Events on streams other than `local`: through the stream's system. */
  private async route(event: EventMessage, cancel: Cancellable): Promise<EventReply> {
    const settings = this.options.settings;
    const systemName = event.meta.system ?? settings.defaultSystem ?? 'local';
    const system = settings.systems[systemName];
    const target = system?.type === 'local' ? this.local.system(systemName) : this.cluster?.system(systemName);
    if (system && target) return target.dispatch(event, cancel);
    const error = toErrorInfo(
      new SagawayError('RUNNER_UNAVAILABLE', `system "${systemName}" is not connected in this process`),
    );
    return { status: 'FAIL', error, inputElement: null, outputElement: null, sent: false };
  }
}
