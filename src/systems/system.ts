import type { Settings, StreamBindingSettings } from '../config/settings.js';
import type { Cancellable } from '../core/cancel.js';
import type { Logger } from '../core/logger.js';
import type { EventMessage, EventReply, LookupOptions, OutcomeStatus, SagaService } from '../core/messages.js';
import type { TraceBus, TraceSource } from '../core/trace.js';
import type { SagaRequest, SagaResult } from '../core/types.js';

/**
 * The cluster port: everything the runner and the gateway need from a transport, and nothing of
 * how it is carried. `local.ts` implements it in process; `nats/` over NATS JetStream; a Kafka or
 * Redis transport would implement these interfaces and nothing else. Two kinds of traffic cross
 * it (gateway -> runner saga requests, orchestrator -> executing runner events with their
 * replies), and five services ride along: serving a process's runners, outcomes without a
 * journal (write and read), the process directory, the console's trace relay and admin queries.
 * The runner imports this file and local.ts only (eslint.config.js); a process picks the
 * implementation by configuration through systems/index.ts createCluster, handed in by the CLI.
 */

/**
 * A runner as every transport sees it, whether it is reached in process (`local`) or served over
 * NATS (structurally: systems never import the runner layer).
 */
export interface RunnerEndpoint {
  readonly name: string;
  readonly deployment: string;
  readonly streams: Readonly<Record<string, StreamBindingSettings>>;
  /** run the saga serving `req.path` (gateway -> runner); never throws */
  run(req: SagaRequest): Promise<SagaResult>;
  /** execute an event that reached this runner; never throws */
  execute(event: EventMessage, binding: StreamBindingSettings | undefined, cancel: Cancellable): Promise<EventReply>;
  /** handler -> action -> versions, and structural action aliases (advertised to orchestrators) */
  describe(): { handlers: Record<string, Record<string, number[]>>; actions: string[] };
  /** the gateway runs in flight in this process: how many, and the oldest `limit` (`sagaway admin runs`) */
  inFlightRuns?(limit: number): { count: number; runs: InFlightRun[] };
}

/** A transport: saga requests to a runner, events to the runners consuming a stream. */
export interface System extends SagaService {
  readonly name: string;
  readonly type: 'local' | 'nats';
  /** deliver an event to the runner(s) consuming `event.stream` and resolve with the reply; never rejects, resolves at once when `cancel` aborts */
  dispatch(event: EventMessage, cancel: Cancellable): Promise<EventReply>;
  /** whether the transport is connected (readiness) */
  ready(): Promise<boolean>;
  close(): Promise<void>;
}

/** Hooks for metrics of the serving side (all optional). */
export interface ServeObserver {
  /** an event ran on this process: its stream, status and duration */
  event?(stream: string, status: string, seconds: number, redelivered: boolean): void;
  /** a saga request from the gateway was answered */
  run?(outcome: string, seconds: number): void;
}

/** What an outcome writer needs to know about its runner. */
export interface RecordedRunner {
  name: string;
  deployment: string;
  statusTtlMs: number;
  statusMaxBytes: number;
}

/** A run being recorded (opaque to the caller). */
export interface OutcomeHandle {
  readonly key: string;
}

/**
 * Outcomes without a journal, writing side (issue 13, docs/distributed.md): the status of each
 * gateway run of one runner, kept for `statusTtl`. Writes never hold up the run and never throw.
 */
export interface OutcomeWriter {
  /** whether writes are accepted now (the store is open) */
  readonly ready: boolean;
  /** the run started (RUNNING); the caller's correlation id is indexed, first run wins */
  begin(scope: string, requestId: string, correlationId: string | undefined): OutcomeHandle;
  /** the run ended (DONE); called before the result goes back */
  end(handle: OutcomeHandle, result: SagaResult): void;
}

/** Outcomes without a journal, reading side (the gateway's /api/status). */
export interface OutcomeLookup {
  /** run `id` of caller `scope` (a run id, or with `byCorrelation` also a correlation id); throws RUNNER_UNAVAILABLE when the store is away */
  lookup(scope: string, id: string, options?: LookupOptions): Promise<OutcomeStatus | undefined>;
}

/** The processes of the cluster, as far as this process knows them. */
export interface ProcessDirectory {
  /** id of this process (journal owner, reply routes, advertisements) */
  readonly instance: string;
  /** whether a process is alive (a journaled run of a dead one is resumed by a survivor) */
  isLive(instance: string): boolean;
  /** how long a full round of liveness news takes (0: known at once) */
  readonly advertiseIntervalMs: number;
}

/** How a value is masked for the console (the gateway's `masked`, gateway/console/mask.ts). */
export type ValueMask = (value: unknown) => unknown;

/** Something started that is stopped once. */
export interface Stoppable {
  stop(): void;
}

/**
 * The console's live runs across processes (docs/console.md): a runner process publishes its
 * traced runs while some console watches; a gateway listens to the runs of every process.
 */
export interface TraceRelay {
  /** runner side: relay `bus`'s runs while a console watches, each snapshot passed through `mask` */
  publish(bus: TraceBus, mask?: ValueMask): Stoppable;
  /** gateway side: the runs the runner processes relay */
  source(): TraceSource;
}

/** One gateway run in flight. */
export interface InFlightRun {
  requestId: string;
  saga: string;
  startedAt: number;
}

/** One process's answer to `sagaway admin runs`. */
export interface RunsAnswer {
  v: 1;
  instance: string;
  runners: { runner: string; deployment: string; count: number; runs: InFlightRun[] }[];
}

/** Runs listed per runner per process at most (an answer stays small). */
export const MAX_LISTED_RUNS = 500;

/** Admin queries across the cluster (`sagaway admin`). */
export interface ClusterAdmin {
  /** the gateway runs in flight in every live runner process; waits at most `waitMs` for answers */
  runs(waitMs: number): Promise<RunsAnswer[]>;
}

/**
 * Every transport of one process behind one face: the Host and the gateway-alone command use
 * this and nothing below it. `run` goes through the system that carries gateway requests.
 */
export interface Cluster extends SagaService {
  readonly directory: ProcessDirectory;
  /** whether every transport is connected now */
  readonly connected: boolean;
  /** start connecting in the background (never blocks, never throws) */
  start(): void;
  /** the system of that name, for dispatch (undefined: not one of this cluster's) */
  system(name: string): System | undefined;
  /** make the runners of this process reachable: their streams, and gateway requests when `serveRequests` */
  serve(endpoints: readonly RunnerEndpoint[], serveRequests: boolean, observer?: ServeObserver): void;
  /** where a runner without a journal keeps its outcomes; undefined when the cluster keeps none */
  outcomeWriter(runner: RecordedRunner, log: Logger): OutcomeWriter | undefined;
  /** the outcomes of the runners that keep them (settings), for /api/status; undefined when none does */
  outcomeReader(): OutcomeLookup | undefined;
  /** the console's trace relay; undefined when the cluster has none */
  traces(): TraceRelay | undefined;
  admin(): ClusterAdmin;
  /** self-checks that switched a library patch off in this process, by name (counted on /metrics) */
  guardsOff(): Readonly<Record<string, number>>;
  /** readiness: `system:<name>` -> connected */
  ready(): Record<string, boolean>;
  /** stop serving (running events finish first), then close the connections */
  close(): Promise<void>;
}

/** Options of a cluster a factory makes. */
export interface ClusterOptions {
  /** id of this process; default a new one */
  instance?: string;
  /** a gateway alone: it sends saga requests and reads outcomes, sets up no stream (docs/distributed.md) */
  gatewayOnly?: boolean;
}

/** Makes the cluster a configuration describes; undefined when it names no remote transport (systems/index.ts). */
export type CreateCluster = (settings: Settings, log: Logger, options?: ClusterOptions) => Promise<Cluster | undefined>;
