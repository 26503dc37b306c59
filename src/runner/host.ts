import { randomBytes } from 'node:crypto';
import type { RunnerSettings, Settings, StateSettings } from '../config/settings.js';
import { compileMasker } from '../core/sensitive.js';
import type { Cancellable } from '../core/cancel.js';
import { SagawayError, toErrorInfo } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { SagaRequest, SagaResult } from '../core/types.js';
import type { State } from '../states/state.js';
import { TraceBus } from '../core/trace.js';
import { LocalSystem } from '../systems/local.js';
import type { NatsHub } from '../systems/nats/hub.js';
import type { ServeObserver } from '../systems/nats/serve.js';
import type { TracePublisher, ValueMask } from '../systems/nats/console-trace.js';
import type { EventMessage, EventReply, SagaService } from '../core/messages.js';
import type { HandlerFactory } from '../handlers/api.js';
import type { EngineObserver } from '../saga/engine.js';
import { Journal, JournalReader } from './orchestrator/journal.js';
import { HandlerRegistry, importHandlerModule, isModuleEntry } from './executor/registry.js';
import { Runner } from './orchestrator/runner.js';
import { createSecretSource, type SecretSource } from './executor/secrets.js';
import { firstStatus, type StatusLookup } from './status.js';
import { DEFAULT_STATUS_MAX_BYTES, DEFAULT_STATUS_TTL_MS, OutcomeRecorder } from '../systems/nats/outcomes.js';
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
  /** default: from settings.secrets */
  secrets?: SecretSource;
  /** serve the hosted runners' gateway requests over NATS (the `runner` command); default false */
  serveRequests?: boolean;
  /** metrics hooks of the NATS serving side */
  observer?: ServeObserver;
  /** metrics hooks of the saga engine (tries, compensations) */
  engineObserver?: EngineObserver;
  /**
   * masks each payload snapshot this process publishes for a console over NATS: the console's
   * own masking (gateway/console/mask.ts `masked`), handed in by the command line so that the
   * runner does not depend on the gateway. Default: the snapshots as core/trace.ts masks them.
   */
  traceMask?: ValueMask;
  /** waits: the clock of wait steps' due times and the pollers; default the real one (tests move it) */
  waitClock?: WaitClock;
}

/** How often journaled runs whose process is gone are looked for. */
const RESUME_INTERVAL_MS = Number(process.env['SAGAWAY_RESUME_MS'] ?? 5000);
/** How often finished runs past their retention are removed from the journals (runner.pruneJournal). */
const PRUNE_INTERVAL_MS = 60_000;

/**
 * The runners of one process, with the states, secrets and the `local` system they share.
 * `service` is what a gateway in the same process calls.
 */
export class Host implements SagaService {
  readonly runners = new Map<string, Runner>();
  readonly local: LocalSystem;
  /** the nats systems of this process, when the configuration has any */
  hub: NatsHub | undefined;
  /** publishes traced runs to watching consoles (with a nats system) */
  private tracePublisher: TracePublisher | undefined;
  /** id of this process (journal owner, NATS reply routes) */
  readonly instance: string;
  /** run traces of the hosted runners (the console listens; nothing is traced otherwise) */
  readonly traces: TraceBus;
  private readonly states = new Map<string, State>();
  private resumeTimer: NodeJS.Timeout | undefined;
  private resuming = false;
  /** when the journals are pruned next (with the orphan scan, at most every PRUNE_INTERVAL_MS) */
  private pruneAt = 0;
  private closed = false;
  /** waits: the wait stores, pollers and callback tokens of this process (runner/waits/) */
  readonly waits: HostWaits;

  private constructor(private readonly options: HostOptions) {
    this.waits = new HostWaits(options.settings, options.log, options.waitClock); // waits:
    this.local = new LocalSystem('local', options.log);
    const shown = options.settings.gateway?.console;
    this.traces = new TraceBus(shown?.snapshotBytes, shown?.sample, compileMasker(shown?.mask));
    this.instance = randomBytes(9).toString('base64url').replace(/[-_]/g, 'x');
  }

  /** Build every runner, open every state, load every handler; throws on configuration errors. */
  static async start(options: HostOptions): Promise<Host> {
    const host = new Host(options);
    try {
      await host.openStates();
      if (Object.values(options.settings.systems).some((sys) => sys.type === 'nats')) {
        // Loaded only when a nats system is configured: the embedded default never touches nats.js.
        const { NatsHub } = await import('../systems/nats/hub.js');
        host.hub = new NatsHub(options.settings, options.log, host.instance);
        host.hub.start();
        // A console watched on a gateway elsewhere asks for this process's traces over NATS, when
        // the file lets traces cross the broker (gateway.console.natsTraces; default off).
        const system = options.settings.gateway?.console?.natsTraces === true ? host.hub.gatewaySystem() : undefined;
        if (system) {
          const { TracePublisher } = await import('../systems/nats/console-trace.js');
          host.tracePublisher = new TracePublisher(system, host.traces, options.log, undefined, options.traceMask);
          host.tracePublisher.start();
        }
      }
      const secrets = options.secrets ?? createSecretSource(options.settings.secrets);
      const names = options.runners ?? Object.keys(options.settings.runners);
      for (const name of names) {
        const settings = options.settings.runners[name];
        if (!settings) throw new SagawayError('CONFIG_INVALID', `no runner "${name}" in the configuration`);
        const runner = await host.buildRunner(settings, secrets);
        host.runners.set(name, runner);
        host.local.register(runner);
      }
      host.hub?.serve([...host.runners.values()], options.serveRequests ?? false, options.observer);
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

  /** Wait until every nats system is connected, at most `timeoutMs`; resolves whether they are. */
  async systemsConnected(timeoutMs: number): Promise<boolean> {
    const end = Date.now() + timeoutMs;
    while (this.hub && !this.hub.connected) {
      if (Date.now() >= end) return false;
      await new Promise((r) => setTimeout(r, 25));
    }
    return true;
  }

  /** The journals of the hosted runners, then the outcome buckets (distributed mode), for the status endpoint. */
  statusReader(): StatusLookup {
    const aliases = new Set(
      [...this.runners.keys()].map((n) => this.options.settings.runners[n]?.journal).filter((a) => a !== undefined),
    );
    return firstStatus([new JournalReader([...aliases].map((a) => this.state(a))), this.hub?.outcomeReader()]);
  }

  /**
   * Look for journaled runs whose process is gone, now and then. With NATS, a process is gone
   * when its advertisements stopped; the first look waits for one advertisement round so that
   * live processes are known. Without NATS, this process owns the journal alone: whatever is
   * RUNNING at start was left by a previous life.
   */
  private startResumer(): void {
    if (![...this.runners.values()].some((r) => r.journaled)) return;
    const hub = this.hub;
    const isLive = (instance: string) => (hub ? hub.isLive(instance) : instance === this.instance);
    const scan = async () => {
      if (this.resuming || this.closed || (hub && !hub.connected)) return;
      this.resuming = true;
      try {
        await Promise.all([...this.runners.values()].map((r) => r.resumeOrphans(isLive)));
        if (Date.now() >= this.pruneAt) {
          this.pruneAt = Date.now() + PRUNE_INTERVAL_MS;
          await Promise.all([...this.runners.values()].map((r) => r.pruneJournal()));
        }
      } catch (err) {
        this.options.log.warn({ err: toErrorInfo(err) }, 'journal scan failed; will retry');
      } finally {
        this.resuming = false;
      }
    };
    const first = hub ? hub.advertiseIntervalMs + 500 : 0;
    setTimeout(() => void scan(), first).unref();
    this.resumeTimer = setInterval(() => void scan(), RESUME_INTERVAL_MS);
    this.resumeTimer.unref();
  }

  /** waits: poll for due waits on every runner that parks (runner/waits/host-waits.ts). */
  private startWaits(): void {
    const parking = [...this.runners.values()].flatMap((r) => {
      const alias = this.options.settings.runners[r.name]?.journal;
      return r.parks && alias !== undefined ? [{ ...r.waitRunner(), journalAlias: alias }] : [];
    });
    this.waits.start(parking);
  }

  /** Readiness of every state and system (name -> reachable). */
  async ready(): Promise<Record<string, boolean>> {
    const out: Record<string, boolean> = { ...this.hub?.ready() };
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
    await this.hub?.close();
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
   * Distributed mode (a nats system carries gateway requests) without a journal: the runner keeps
   * its outcomes in a key-value bucket for /api/status (systems/nats/outcomes.ts).
   */
  private outcomesOf(settings: RunnerSettings, log: Logger): { outcomes?: OutcomeRecorder } {
    const system = this.hub?.gatewaySystem();
    const ttl = settings.statusTtlMs ?? DEFAULT_STATUS_TTL_MS;
    // A runner without sagas is never asked to run one: it needs no bucket.
    if (!system || settings.journal !== undefined || ttl <= 0 || settings.plans.length === 0) return {};
    const runner = {
      name: settings.name,
      deployment: settings.deployment,
      statusTtlMs: ttl,
      statusMaxBytes: settings.statusMaxBytes ?? DEFAULT_STATUS_MAX_BYTES,
    };
    return { outcomes: new OutcomeRecorder(system, runner, this.instance, log) };
  }

  /** Events on streams other than `local`: through the stream's system. */
  private async route(event: EventMessage, cancel: Cancellable): Promise<EventReply> {
    const settings = this.options.settings;
    const systemName = event.meta.system ?? settings.defaultSystem ?? 'local';
    const system = settings.systems[systemName];
    if (system?.type === 'local') return this.local.dispatch(event, cancel);
    const nats = system?.type === 'nats' ? this.hub?.systems.get(systemName) : undefined;
    if (nats) return nats.dispatch(event, cancel);
    const error = toErrorInfo(
      new SagawayError('RUNNER_UNAVAILABLE', `system "${systemName}" is not connected in this process`),
    );
    return { status: 'FAIL', error, inputElement: null, outputElement: null, sent: false };
  }
}
