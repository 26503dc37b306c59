import { randomBytes } from 'node:crypto';
import type { NatsSystemSettings, Settings } from '../../config/settings.js';
import { SagawayError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { SagaRequest, SagaResult } from '../../core/types.js';
import {
  type Cluster,
  type ClusterAdmin,
  type ProcessDirectory,
  type RecordedRunner,
  type ServeObserver,
  type TraceRelay,
} from '../system.js';
import { NatsSystem } from './system.js';
import { PendingReplies } from './pending.js';
import { OutcomeReader } from './outcome-reader.js';
import { OutcomeRecorder } from './outcomes.js';
import { answerRunQueries } from './admin-responder.js';
import { collectRuns } from './admin.js';
import { natsTraceRelay } from './console-trace.js';
import { coalesceSwitchedOff } from './coalesce.js';
import { NatsServer, type NatsEndpoint } from './serve.js';

/** A new id for this process: reply routes and advertisements carry it. */
export function newInstanceId(): string {
  return randomBytes(9).toString('base64url').replace(/[-_]/g, 'x');
}

/**
 * Every nats system of one process, with what they share: the process's instance id and the
 * events in flight (a reply may come back on another system: `responseSystem`). The cluster
 * port (system.ts Cluster) over NATS: gateway requests, outcomes, the console's traces and admin
 * queries go through the gateway system (`defaultSystem` when it is a nats system, else the first).
 */
export class NatsHub implements Cluster, ProcessDirectory {
  readonly systems = new Map<string, NatsSystem>();
  readonly pending: PendingReplies;
  private readonly servers: NatsServer[] = [];
  private readonly responders: { stop(): void }[] = [];

  constructor(
    private readonly settings: Settings,
    private readonly log: Logger,
    readonly instance: string = newInstanceId(),
    /** a gateway alone: no streams set up, no event replies listened for (NatsSystemOptions.gatewayOnly) */
    options: { gatewayOnly?: boolean } = {},
  ) {
    this.pending = new PendingReplies(log);
    for (const sys of Object.values(settings.systems)) {
      if (sys.type !== 'nats') continue;
      this.systems.set(
        sys.name,
        new NatsSystem({
          settings: sys as NatsSystemSettings,
          log,
          instance: this.instance,
          pending: this.pending,
          peer: (name) => this.systems.get(name),
          gatewayOnly: options.gatewayOnly === true,
        }),
      );
    }
  }

  /** Whether the configuration has any nats system. */
  static needed(settings: Settings): boolean {
    return Object.values(settings.systems).some((s) => s.type === 'nats');
  }

  /** The hub is its own process directory (every system's advertisements). */
  get directory(): ProcessDirectory {
    return this;
  }

  /** The nats system of that name. */
  system(name: string): NatsSystem | undefined {
    return this.systems.get(name);
  }

  /** Start connecting every system in the background (never blocks, never throws). */
  start(): void {
    for (const s of this.systems.values()) {
      s.start().catch((err: unknown) =>
        this.log.error({ err: (err as Error).message, system: s.name }, 'NATS connect failed'),
      );
    }
  }

  /**
   * The system that carries gateway -> runner requests: `defaultSystem` when it is a nats
   * system, else the first nats system of the file.
   */
  gatewaySystem(): NatsSystem | undefined {
    const d = this.settings.defaultSystem;
    if (d !== undefined && this.systems.has(d)) return this.systems.get(d);
    return this.systems.values().next().value;
  }

  /** Gateway -> runner through the gateway system. */
  run(runner: string, req: SagaRequest): Promise<SagaResult> {
    const sys = this.gatewaySystem();
    if (!sys) throw new SagawayError('CONFIG_INVALID', 'no nats system in the configuration');
    return sys.run(runner, req);
  }

  /**
   * Where a runner without a journal keeps its outcomes: a key-value bucket on the gateway system
   * (outcomes.ts). Undefined without a nats system.
   */
  outcomeWriter(runner: RecordedRunner, log: Logger): OutcomeRecorder | undefined {
    const system = this.gatewaySystem();
    return system && new OutcomeRecorder(system, runner, this.instance, log);
  }

  /** The console's traces across processes, over the gateway system (console-trace.ts). */
  traces(): TraceRelay | undefined {
    const system = this.gatewaySystem();
    return system && natsTraceRelay(system, this.log);
  }

  /** `sagaway admin runs` over the gateway system (admin.ts); rejects when it is not connected. */
  admin(): ClusterAdmin {
    return {
      runs: (waitMs) => {
        const system = this.gatewaySystem();
        return system ? collectRuns(system, waitMs) : Promise.resolve([]);
      },
    };
  }

  /** Self-checks that switched a library patch off in this process, by name (coalesce.ts). */
  guardsOff(): Record<string, number> {
    return { nats_coalesce: coalesceSwitchedOff() };
  }

  /** Serve the runners of this process: gateway requests, their streams, advertisements. */
  serve(endpoints: readonly NatsEndpoint[], serveRequests: boolean, observer: ServeObserver = {}): void {
    const gateway = this.gatewaySystem();
    for (const system of this.systems.values()) {
      const server = new NatsServer(
        system,
        endpoints,
        serveRequests && system === gateway,
        (n) => this.systems.get(n),
        this.log,
        this.instance,
        observer,
      );
      server.start();
      this.servers.push(server);
    }
    if (gateway && endpoints.length > 0) this.responders.push(answerRunQueries(gateway, endpoints, this.instance));
  }

  /**
   * The reader of the outcome buckets (issue 13) of the runners that keep one: those with sagas,
   * without a journal and with a statusTtl above 0. Undefined when no runner does.
   */
  outcomeReader(): OutcomeReader | undefined {
    const system = this.gatewaySystem();
    const runners = Object.values(this.settings.runners)
      .filter((r) => r.journal === undefined && r.plans.length > 0 && r.statusTtlMs > 0)
      .map((r) => r.name);
    if (!system || runners.length === 0) return undefined;
    return new OutcomeReader(system, runners, (instance) => this.isLive(instance));
  }

  /** Whether a process instance is alive, per any system's advertisements. */
  isLive(instance: string): boolean {
    if (instance === this.instance) return true;
    for (const s of this.systems.values()) if (s.directory.isLive(instance)) return true;
    return false;
  }

  /** Readiness: system name -> connected. */
  ready(): Record<string, boolean> {
    const out: Record<string, boolean> = {};
    for (const [name, s] of this.systems) out[`system:${name}`] = s.isConnected;
    return out;
  }

  /** The longest interval of runner advertisements among the systems: one full round of all of them. */
  get advertiseIntervalMs(): number {
    return Math.max(...[...this.systems.values()].map((s) => s.advertiseIntervalMs));
  }

  /** Whether every system is connected. */
  get connected(): boolean {
    return [...this.systems.values()].every((s) => s.isConnected);
  }

  /** Stop serving (running events finish first), then close the connections. */
  async close(): Promise<void> {
    for (const r of this.responders) r.stop();
    await Promise.all(this.servers.map((s) => s.stop()));
    await Promise.all([...this.systems.values()].map((s) => s.close()));
  }
}
