import type { RunnerSettings, Settings, StateSettings } from '../config/settings.js';
import { SagawayError, toErrorInfo } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { SagaRequest, SagaResult } from '../core/types.js';
import { compileSaga } from '../saga/graph.js';
import type { State } from '../states/state.js';
import { LocalSystem } from '../systems/local.js';
import type { EventMessage, EventReply, SagaService } from '../systems/system.js';
import type { HandlerFactory } from './handler-api.js';
import { HandlerRegistry, importHandlerModule, isModuleEntry } from './registry.js';
import { Runner } from './runner.js';
import { createSecretSource, type SecretSource } from './secrets.js';

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
}

/**
 * The runners of one process, with the states, secrets and the `local` system they share.
 * `service` is what a gateway in the same process calls.
 */
export class Host implements SagaService {
  readonly runners = new Map<string, Runner>();
  readonly local: LocalSystem;
  private readonly states = new Map<string, State>();

  private constructor(private readonly options: HostOptions) {
    this.local = new LocalSystem('local', options.log);
  }

  /** Build every runner, open every state, load every handler; throws on configuration errors. */
  static async start(options: HostOptions): Promise<Host> {
    const host = new Host(options);
    try {
      await host.openStates();
      const secrets = options.secrets ?? createSecretSource(options.settings.secrets);
      const names = options.runners ?? Object.keys(options.settings.runners);
      for (const name of names) {
        const settings = options.settings.runners[name];
        if (!settings) throw new SagawayError('CONFIG_INVALID', `no runner "${name}" in the configuration`);
        const runner = await host.buildRunner(settings, secrets);
        host.runners.set(name, runner);
        host.local.register(runner);
      }
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

  /** Readiness of every state (name -> reachable). */
  async ready(): Promise<Record<string, boolean>> {
    const out: Record<string, boolean> = {};
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
    const sagas = settings.sagas.map((s) => compileSaga(s, this.options.settings.gateway.limits.timeoutMs));
    const runner = new Runner(
      {
        settings: this.options.settings,
        runner: settings,
        registry,
        secrets,
        log,
        state: this.state,
        route: (event, signal) => this.route(event, signal),
      },
      sagas,
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

  /** Events on streams other than `local`: through the stream's system. */
  private async route(event: EventMessage, signal: AbortSignal): Promise<EventReply> {
    const settings = this.options.settings;
    const systemName = event.meta.system ?? settings.defaultSystem ?? 'local';
    const system = settings.systems[systemName];
    if (system?.type === 'local') return this.local.dispatch(event, { signal });
    const error = toErrorInfo(
      new SagawayError('RUNNER_UNAVAILABLE', `system "${systemName}" is not connected in this process`),
    );
    return { status: 'FAIL', error, inputElement: null, outputElement: null };
  }
}
