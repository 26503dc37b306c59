import type { Cancellable } from '../core/cancel.js';
import { SagawayError, toErrorInfo } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { SagaRequest, SagaResult } from '../core/types.js';
import type { EventMessage, EventReply } from '../core/messages.js';
import type {
  Cluster,
  ClusterAdmin,
  OutcomeWriter,
  ProcessDirectory,
  RecordedRunner,
  RunnerEndpoint,
  System,
  TraceRelay,
} from './system.js';
import { MAX_LISTED_RUNS } from './system.js';
import { LocalTraceRelay, MemoryOutcomes } from './local-services.js';

/** The runners of this process: the transports' one endpoint interface (system.ts). */
export type LocalEndpoint = RunnerEndpoint;

/**
 * The `local` system: everything in one process. Saga requests go to the runner by name; an
 * event on a stream goes to the runners of this process that consume that stream, filtered by
 * the step's `deployments`. When several match, each runs it and the first reply is kept
 * (DESIGN §6.1 `deployments`); the others are logged as duplicates.
 */
export class LocalSystem implements System {
  readonly type = 'local' as const;
  private readonly endpoints = new Map<string, LocalEndpoint>();

  constructor(
    readonly name: string,
    private readonly log: Logger,
  ) {}

  /** Make a runner of this process reachable. */
  register(endpoint: LocalEndpoint): void {
    this.endpoints.set(endpoint.name, endpoint);
  }

  run(runner: string, req: SagaRequest): Promise<SagaResult> {
    const endpoint = this.endpoints.get(runner);
    if (!endpoint) {
      const error = toErrorInfo(new SagawayError('RUNNER_UNAVAILABLE', `runner "${runner}" is not running`));
      return Promise.resolve({ outcome: 'FAIL', http: 503, error, ran: 'none' });
    }
    return endpoint.run(req);
  }

  async dispatch(event: EventMessage, cancel: Cancellable): Promise<EventReply> {
    const allowed = event.meta.deployments;
    const targets = [...this.endpoints.values()].filter(
      (e) => Object.hasOwn(e.streams, event.stream) && (!allowed || allowed.includes(e.deployment)),
    );
    if (targets.length === 0) {
      return {
        status: 'FAIL',
        error: toErrorInfo(new SagawayError('RUNNER_UNAVAILABLE', `no runner consumes stream "${event.stream}"`)),
        inputElement: null,
        outputElement: null,
        sent: false,
      };
    }
    const runs = targets.map((t) =>
      t.execute(event, t.streams[event.stream], cancel).then((r) => ({ ...r, deployment: t.deployment })),
    );
    const first = await Promise.race(runs);
    if (runs.length > 1) {
      this.log.warn(
        { stream: event.stream, step: event.stepId, runners: targets.map((t) => t.name) },
        'event ran on several deployments; the first reply was kept',
      );
    }
    return first;
  }

  async ready(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    this.endpoints.clear();
  }
}

/**
 * The cluster port (system.ts) in one process: the runners are served by registering them with
 * the `local` system, this process is the only one (a journaled run found RUNNING was left by a
 * previous life), outcomes are kept in memory and traces relayed in process. The Host uses it
 * for serving, dispatch and the directory; outcomes and the trace relay are for callers that want
 * the port's services without a broker (the Host keeps outcomes only on a remote cluster, where
 * a gateway in another process reads them: in one process /api/status reads the journals).
 */
export class LocalCluster implements Cluster, ProcessDirectory {
  readonly inProcess: LocalSystem;
  readonly connected = true;
  readonly advertiseIntervalMs = 0;
  private readonly outcomes = new MemoryOutcomes();
  private readonly relay = new LocalTraceRelay();
  private readonly endpoints: RunnerEndpoint[] = [];

  constructor(
    readonly instance: string,
    log: Logger,
  ) {
    this.inProcess = new LocalSystem('local', log);
  }

  get directory(): ProcessDirectory {
    return this;
  }

  isLive(instance: string): boolean {
    return instance === this.instance;
  }

  /** Nothing to connect: the runners are in this process. */
  start(): void {}

  /** Every system of type `local` is this one in-process system. */
  system(_name: string): LocalSystem {
    return this.inProcess;
  }

  run(runner: string, req: SagaRequest): Promise<SagaResult> {
    return this.inProcess.run(runner, req);
  }

  serve(endpoints: readonly RunnerEndpoint[]): void {
    for (const e of endpoints) {
      this.inProcess.register(e);
      this.endpoints.push(e);
    }
  }

  outcomeWriter(runner: RecordedRunner): OutcomeWriter {
    return this.outcomes.writer(runner);
  }

  outcomeReader(): MemoryOutcomes {
    return this.outcomes;
  }

  traces(): TraceRelay {
    return this.relay;
  }

  /** The runs in flight of the runners served here (one process answers). */
  admin(): ClusterAdmin {
    return {
      runs: async () => [
        {
          v: 1,
          instance: this.instance,
          runners: this.endpoints.map((e) => {
            const { count, runs } = e.inFlightRuns?.(MAX_LISTED_RUNS) ?? { count: 0, runs: [] };
            return { runner: e.name, deployment: e.deployment, count, runs };
          }),
        },
      ],
    };
  }

  guardsOff(): Record<string, number> {
    return {};
  }

  ready(): Record<string, boolean> {
    return {};
  }

  async close(): Promise<void> {
    this.endpoints.length = 0;
    await this.inProcess.close();
  }
}
