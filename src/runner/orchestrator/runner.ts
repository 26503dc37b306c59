import { randomUUID } from 'node:crypto';
import { NOT_STREAMABLE } from '../../saga/wait-plan.js';
import type { ApiSettings, RunnerSettings, Settings, StreamBindingSettings } from '../../config/settings.js';
import { Cancel, type Cancellable } from '../../core/cancel.js';
import { callerKey } from '../../core/caller.js';
import type { Logger } from '../../core/logger.js';
import type { RequestContext, SagaRequest, SagaResult } from '../../core/types.js';
import type { StepTracer, TraceBus } from '../../core/trace.js';
import { runSaga, type EngineDeps, type EngineObserver } from '../../saga/engine.js';
import type { WaitRunner } from '../waits/resume.js';
import type { CompiledSaga } from '../../saga/graph.js';
import type { State } from '../../states/state.js';
import type { EventMessage, EventReply } from '../../core/messages.js';
import { executeEvent, executeNow, type ExecutorDeps } from '../executor/execute.js';
import { rootLineage, type Lineage } from '../../core/lineage.js';
import type { Journal } from './journal.js';
import type { HandlerEnv } from '../../handlers/api.js';
import type { HandlerRegistry } from '../executor/registry.js';
import { RouteTable } from '../../saga/routes.js';
import { InFlightRuns, type InFlightRun } from './in-flight.js';
import type { OutcomeWriter } from '../../systems/system.js';
import type { SecretSource } from '../executor/secrets.js';
import { handlerEnv, type HandlerEnvHost } from './handler-env.js';
import { OnFailRuns, type OnFailHost } from './on-fail.js';
import { resumeOrphans, type ResumeHost } from './resume.js';
import { authorize, reject, unrecorded } from './run-answers.js';
import { waitRunnerOf, type RunnerWaits } from '../waits/runner-hooks.js'; // waits:
import { tracing, type RunSpan } from '../../core/otel.js';
import { endRunSpan, runSpan } from './run-span.js';
import { tracedExecute } from './action-span.js';

/** What a runner is built from. */
export interface RunnerDeps {
  settings: Settings;
  runner: RunnerSettings;
  registry: HandlerRegistry;
  secrets: SecretSource;
  log: Logger;
  state(alias: string): State;
  /** deliver an event on a stream other than `local` (the host picks the system); never rejects */
  route(event: EventMessage, cancel: Cancellable): Promise<EventReply>;
  /** the saga journal, when `runners.R.journal` names one */
  journal?: Journal;
  /** engine metrics hooks (tries, compensations) */
  observer?: EngineObserver;
  /** distributed mode without a journal: where run outcomes are kept for /api/status (issue 13) */
  outcomes?: OutcomeWriter;
  /** the process's run traces (the console); runs are traced only while someone listens */
  traces?: TraceBus;
  /** waits: the wait store of the journal, its clock and tokens (runner/waits/); with `journal` */
  waits?: RunnerWaits;
}

/**
 * A runner: it orchestrates the sagas it lists (gateway requests land here) and executes the
 * events that reach it (`local` events of its own sagas, and events on the streams it consumes).
 * A run's onFail is on-fail.ts, resuming the runs of a process that is gone resume.ts, and what
 * built-in handlers get handler-env.ts; this file starts runs and routes their events.
 */
export class Runner {
  readonly name: string;
  readonly deployment: string;
  readonly streams: Readonly<Record<string, StreamBindingSettings>>;
  private readonly routes: RouteTable;
  private readonly executor: ExecutorDeps;
  private readonly dispatchBound: (event: EventMessage, cancel: Cancellable) => Promise<EventReply>;
  /** the engine's dispatch: a local action's reply as it is, without a promise when it has one at once */
  private readonly dispatchNow: EngineDeps['dispatch'];
  private observer: EngineObserver | undefined;
  /** the gateway runs this process is running now (`sagaway admin runs`) */
  private readonly inFlight = new InFlightRuns();
  /** the onFail sagas started after failed runs (on-fail.ts) */
  private readonly onFail: OnFailRuns;
  /** what the files beside this one need of the runner */
  private readonly host: OnFailHost & ResumeHost & HandlerEnvHost;

  constructor(
    private readonly deps: RunnerDeps,
    sagas: readonly CompiledSaga[],
  ) {
    this.name = deps.runner.name;
    this.deployment = deps.runner.deployment;
    this.streams = deps.runner.streams;
    this.routes = new RouteTable(sagas);
    this.executor = {
      runner: deps.runner,
      registry: deps.registry,
      values: deps.settings.values,
      secrets: deps.secrets,
      log: deps.log,
      state: deps.state,
    };
    this.dispatchNow = (event, cancel) => this.dispatch(event, cancel);
    // (Promise.resolve hands a promise back as it is)
    this.dispatchBound = (event, cancel) => Promise.resolve(this.dispatch(event, cancel));
    this.observer = deps.observer;
    this.host = {
      name: this.name,
      settings: deps.settings,
      runner: deps.runner,
      log: deps.log,
      state: deps.state,
      routes: this.routes,
      // The gateway's API entries that map to this runner, longest prefix first (StartSaga checks them).
      apis: (deps.settings.gateway?.apis ?? [])
        .filter((a: ApiSettings) => a.runner === this.name)
        .sort((a, b) => b.path.length - a.path.length),
      sagaById: (id) => this.routes.byId(id),
      engine: () => this.engineDeps(),
      rootLineage: () => this.rootLineage(),
      afterRun: (...args) => this.onFail.after(...args),
      // waits: a resumed run that reaches a wait step parks again
      ...(deps.waits ? { parkHook: (saga, entry, runId) => this.waitRunner().parkHook(saga, entry, runId) } : {}),
      dispatch: this.dispatchBound,
      start: (...args) => this.start(...args),
    };
    this.onFail = new OnFailRuns(this.host);
  }

  /**
   * onFail runs in flight at most (on-fail.ts OnFailRuns.max): past it, an onFail saga is not
   * started and that is logged.
   */
  get maxOnFailRuns(): number {
    return this.onFail.max;
  }

  set maxOnFailRuns(max: number) {
    this.onFail.max = max;
  }

  /** Count the engine's tries and compensations (set once the process's metrics registry exists). */
  observe(observer: EngineObserver): void {
    this.observer = observer;
  }

  /** waits: whether this runner parks runs (a wait step, and a journal for it) */
  get parks(): boolean {
    return this.deps.waits !== undefined;
  }

  /** Whether this runner journals its runs. */
  get journaled(): boolean {
    return this.deps.journal !== undefined;
  }

  /** Whether one of this runner's sagas serves this path (for any method). */
  serves(path: string): boolean {
    return this.routes.match('GET', path).kind !== 'not-found';
  }

  /** Run the saga serving `req.path` (gateway -> runner). Never throws. */
  run(req: SagaRequest): Promise<SagaResult> {
    const match = this.routes.match(req.method, req.path);
    // The path is the caller's: never echoed in the problem (issue 9, item 9).
    if (match.kind === 'not-found')
      return Promise.resolve(reject('NOT_FOUND', `no saga serves ${req.method} on this path`));
    if (match.kind === 'method-not-allowed') {
      return Promise.resolve(
        reject('METHOD_NOT_ALLOWED', `${req.method} is not allowed here (allowed: ${match.allow.join(', ')})`),
      );
    }
    const { saga, params } = match;
    const denied = authorize(saga, req.user);
    if (denied) return Promise.resolve(denied);
    // waits: a stream's polls would each park a new run (the gateway refuses it first when it knows the saga)
    if (req.form === 'stream' && saga.waits) return Promise.resolve(reject('WAIT_NOT_STREAMABLE', NOT_STREAMABLE));
    const input: Record<string, unknown> = { ...req.input, ...params };
    const context: RequestContext = {
      request: { method: req.method, path: req.path, id: req.requestId, query: req.query },
      user: req.user,
    };
    // The gateway names the run (its X-Request-Id, or one id per stream poll), so that the
    // idempotency keys and logs of the run carry the id the client got; else a fresh one.
    const runId = isRunId(req.runId) ? req.runId : randomUUID();
    // Traced only while someone listens (the console): otherwise not even the record is made.
    const tracer = this.deps.traces?.active
      ? this.deps.traces.begin({
          requestId: req.requestId,
          runner: this.name,
          sagaId: saga.id,
          method: req.method,
          path: req.path,
        })
      : undefined;
    // One reaction at the end instead of an async function around the run (issue 23).
    const inFlight = this.inFlight;
    const id = inFlight.add(req.requestId, saga.id);
    const otel = runSpan('request', saga.id, runId, this.name, req.trace); // undefined while tracing is off
    let run: Promise<SagaResult>;
    try {
      run = this.startRun(saga, input, context, req, runId, tracer?.step, otel);
    } catch (err) {
      inFlight.remove(id);
      return Promise.reject(err as Error);
    }
    return run.then(
      (result) => {
        inFlight.remove(id);
        tracer?.end(result);
        endRunSpan(otel, result);
        return result;
      },
      (err: unknown) => {
        inFlight.remove(id);
        throw err;
      },
    );
  }

  /** A gateway run: journaled, else with its outcome recorded (distributed mode), else plain. */
  private startRun(
    saga: CompiledSaga,
    input: Record<string, unknown>,
    context: RequestContext,
    req: SagaRequest,
    runId: string,
    trace: StepTracer | undefined,
    otel: RunSpan | undefined,
  ): Promise<SagaResult> {
    if (this.deps.journal) return this.startJournaled(this.deps.journal, saga, input, context, req, runId, trace, otel);
    const cancel = req.cancel ?? (req.signal && Cancel.fromSignal(req.signal));
    const outcomes = this.deps.outcomes;
    const lineage = this.rootLineage();
    if (!outcomes) return this.start(saga, input, context, req.deadline, cancel, runId, trace, lineage, otel);
    // Written before the result goes back, never awaited (systems/system.ts OutcomeWriter).
    const handle = outcomes.begin(scopeOf(req), req.requestId, correlationOf(req));
    return this.start(saga, input, context, req.deadline, cancel, runId, trace, lineage, otel).then((result) => {
      outcomes.end(handle, result);
      return result;
    });
  }

  /**
   * A journaled run is durable: it is not cancelled when the caller goes away (the outcome is
   * read later at /api/status), and it is resumed by another process if this one dies.
   */
  private async startJournaled(
    journal: Journal,
    saga: CompiledSaga,
    input: Record<string, unknown>,
    context: RequestContext,
    req: SagaRequest,
    runId: string,
    trace?: StepTracer,
    otel?: RunSpan,
  ): Promise<SagaResult> {
    const deadline = req.deadline;
    const scope = scopeOf(req);
    const correlation = correlationOf(req);
    // The start record is committed before the run's first event is dispatched (`started`), so
    // that a process killed mid-run always leaves a record to resume or undo it from; the start
    // records of concurrent runs share a group commit (journal.ts). If the run's record cannot be
    // written, the caller gets that failure (503 when the store is down), never the saga's result.
    // the run's first trace is kept, so that a resumed run's trace links to it (run-span.ts)
    const entry = journal.open(saga.id, runId, input, context, scope, correlation, otel?.carrier);
    const own = Date.now() + saga.timeoutMs;
    const lineage = this.rootLineage();
    const result = await runSaga(this.engineDeps(), {
      saga,
      input,
      context,
      deadline: deadline === undefined ? own : Math.min(deadline, own),
      runId,
      lineage,
      journal: journal.stepper(entry),
      unwindJournal: journal.unwinder(entry),
      started: () => journal.started(entry),
      ...(trace ? { trace } : {}),
      otel,
      ...(this.deps.waits ? { park: this.waitRunner().parkHook(saga, entry, runId) } : {}), // waits:
      suspend: journal.suspender(entry),
    });
    // waits: parked; runs: suspended (its retries ran out); the journal says so already
    if (result.outcome === 'WAITING' || result.outcome === 'SUSPENDED') return result;
    // No answer without its record (issue 26 item 1): an outcome the journal did not take is
    // written later (journal.ts settle), and the caller gets 503, never the result.
    const settled = await journal.settle(entry, result);
    if (settled !== 'written') return unrecorded(settled);
    this.onFail.after(saga, input, context, runId, result, lineage);
    return result;
  }

  /** The lineage of a request's own run: the first of its budget (core/lineage.ts). */
  private rootLineage(): Lineage {
    return rootLineage(this.deps.runner.maxRunsPerRequest);
  }

  /** Remove finished runs past `journalRetention` from the journal (bounded; journal-scans.ts prune). */
  pruneJournal(now = Date.now()): Promise<number> {
    const journal = this.deps.journal;
    if (!journal) return Promise.resolve(0);
    return journal.prune(this.deps.runner.journalRetentionMs, now);
  }

  /**
   * Take over the journaled runs whose process is gone and finish them, each from the step
   * after its last completed event step (with a fresh saga timeout). Resolves when they ended.
   */
  resumeOrphans(isLive: (instance: string) => boolean): Promise<number> {
    const journal = this.deps.journal;
    if (!journal) return Promise.resolve(0);
    return resumeOrphans(this.host, journal, isLive);
  }

  /** waits: what resuming a parked run needs of this runner (runner/waits/resume.ts). */
  waitRunner(): WaitRunner & { readonly deployment: string } {
    return waitRunnerOf(this, this.deps, {
      engineDeps: () => this.engineDeps(),
      saga: (id) => this.routes.byId(id),
      rootLineage: () => this.rootLineage(),
      afterRun: (saga, d, context, result, lineage) =>
        this.onFail.after(saga, d.input, context, d.runId, result, lineage),
    });
  }

  private engineDeps(): EngineDeps {
    return {
      dispatch: this.dispatchNow,
      log: this.deps.log,
      maxSteps: this.deps.runner.maxSteps,
      ...(this.observer ? { observer: this.observer } : {}),
    };
  }

  /** Wait (at most `timeoutMs`) for the onFail sagas still running, before the process closes its states. */
  drain(timeoutMs = 10_000): Promise<void> {
    return this.onFail.drain(timeoutMs);
  }

  /** The gateway runs in flight in this process (`sagaway admin runs`). */
  inFlightRuns(limit: number): { count: number; runs: InFlightRun[] } {
    return { count: this.inFlight.size, runs: this.inFlight.list(limit) };
  }

  /** What this runner offers, advertised to orchestrators: handler -> action -> versions, and structural aliases. */
  describe(): { handlers: Record<string, Record<string, number[]>>; actions: string[] } {
    return { handlers: this.deps.registry.describe(), actions: Object.keys(this.deps.runner.actions) };
  }

  /** Run a saga of this runner with a ready input and context (also used by saga.StartSaga). */
  start(
    saga: CompiledSaga,
    input: Record<string, unknown>,
    context: RequestContext,
    deadline?: number,
    cancel?: Cancellable,
    runId: string = randomUUID(),
    trace?: StepTracer,
    lineage: Lineage = this.rootLineage(),
    otel?: RunSpan,
  ): Promise<SagaResult> {
    const own = Date.now() + saga.timeoutMs;
    const run = runSaga(this.engineDeps(), {
      saga,
      input,
      context,
      deadline: deadline === undefined ? own : Math.min(deadline, own),
      runId,
      lineage,
      ...(cancel ? { cancel } : {}),
      ...(trace ? { trace } : {}),
      otel,
    });
    if (saga.onFail === undefined) return run;
    return run.then((result) => {
      this.onFail.after(saga, input, context, runId, result, lineage);
      return result;
    });
  }

  /** Execute an event that reached this runner (its own `local` events, or a stream it consumes). */
  execute(event: EventMessage, binding: StreamBindingSettings | undefined, cancel: Cancellable): Promise<EventReply> {
    // an event of a traced run gets its action's span (action-span.ts); else nothing is done
    if (event.trace !== undefined && tracing.current !== undefined) return tracedExecute(this, event, binding, cancel);
    return executeEvent(this.executor, event, binding, cancel);
  }

  /** Execute without the action's span (action-span.ts adds it). */
  executeUntraced(
    event: EventMessage,
    binding: StreamBindingSettings | undefined,
    cancel: Cancellable,
  ): Promise<EventReply> {
    return executeEvent(this.executor, event, binding, cancel);
  }

  /** Orchestrator side: where an event step's event goes. */
  private dispatch(event: EventMessage, cancel: Cancellable): EventReply | Promise<EventReply> {
    // A local event whose action answers at once is answered at once (executeNow): the engine
    // goes on to the next step in the same tick.
    if (event.stream === 'local') {
      if (event.trace !== undefined && tracing.current !== undefined)
        return tracedExecute(this, event, undefined, cancel);
      return executeNow(this.executor, event, undefined, cancel);
    }
    return this.deps.route(event, cancel);
  }

  /** The environment built-in handlers of this runner get (handler-env.ts). */
  handlerEnv(): HandlerEnv {
    return handlerEnv(this.host);
  }
}

/** A run id the gateway chose: short, and only characters that are safe in keys and logs. */
function isRunId(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Za-z0-9._:-]{1,160}$/.test(value);
}

/**
 * The caller's scope of a run's status record. The gateway names it (it knows the source address
 * of anonymous callers); a request from elsewhere (a test, an older gateway) is scoped by its
 * principal alone.
 */
function scopeOf(req: SagaRequest): string {
  return isWireId(req.caller, 2048) ? req.caller : callerKey(req.user, 'local');
}

/** The client's own X-Request-Id, when it is a sane one. */
function correlationOf(req: SagaRequest): string | undefined {
  return isWireId(req.correlationId, 128) ? req.correlationId : undefined;
}

/** A string field of a request that came over the broker, within its bound. */
function isWireId(value: unknown, max: number): value is string {
  return typeof value === 'string' && value !== '' && value.length <= max;
}
