import { randomUUID } from 'node:crypto';
import type { RawEventMeta } from '../../config/schema.js';
import type { ApiSettings, RunnerSettings, Settings, StreamBindingSettings } from '../../config/settings.js';
import { DEFAULT_JOURNAL_RETENTION_MS } from '../../config/compile.js';
import { Cancel, type Cancellable } from '../../core/cancel.js';
import { callerKey } from '../../core/caller.js';
import { SagawayError, toErrorInfo } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { Payload, Principal, RequestContext, SagaRequest, SagaResult } from '../../core/types.js';
import { roleRefusal } from '../../core/roles.js';
import type { StepTracer, TraceBus } from '../../core/trace.js';
import { runSaga, type EngineObserver } from '../../saga/engine.js';
import type { WaitResolution } from '../../saga/wait-step.js';
import type { WaitRunner } from '../waits/resume.js';
import type { CompiledSaga } from '../../saga/graph.js';
import type { State } from '../../states/state.js';
import type { EventMessage, EventReply } from '../../core/messages.js';
import { cancelOf, executeEvent, parentRunOf, type ExecutorDeps } from '../executor/execute.js';
import { onFailLineage, rootLineage, takeRun, type Lineage } from '../../core/lineage.js';
import type { Journal, JournalData, JournalEntry } from './journal.js';
import type { ActionContext, HandlerEnv } from '../../handlers/api.js';
import type { HandlerRegistry } from '../executor/registry.js';
import { RouteTable } from './routes.js';
import { InFlightRuns, type InFlightRun } from './in-flight.js';
import type { OutcomeRecorder } from '../../systems/nats/outcomes.js';
import type { SecretSource } from '../executor/secrets.js';
import { waitRunnerOf, type RunnerWaits } from '../waits/runner-hooks.js'; // waits:

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
  outcomes?: OutcomeRecorder;
  /** the process's run traces (the console); runs are traced only while someone listens */
  traces?: TraceBus;
  /** waits: the wait store of the journal, its clock and tokens (runner/waits/); with `journal` */
  waits?: RunnerWaits;
}

/** onFail runs one runner keeps in flight at most (Runner.maxOnFailRuns). */
export const MAX_ON_FAIL_RUNS = 1000;

/**
 * A runner: it orchestrates the sagas it lists (gateway requests land here) and executes the
 * events that reach it (`local` events of its own sagas, and events on the streams it consumes).
 */
export class Runner {
  readonly name: string;
  readonly deployment: string;
  readonly streams: Readonly<Record<string, StreamBindingSettings>>;
  private readonly routes: RouteTable;
  /** The gateway's API entries that map to this runner, longest prefix first (StartSaga checks them). */
  private readonly apis: readonly ApiSettings[];
  private readonly executor: ExecutorDeps;
  private readonly dispatchBound: (event: EventMessage, cancel: Cancellable) => Promise<EventReply>;
  private observer: EngineObserver | undefined;
  /** the gateway runs this process is running now (`sagaway admin runs`) */
  private readonly inFlight = new InFlightRuns();
  /** onFail runs in flight (detached from their callers; awaited on shutdown) */
  private readonly detached = new Set<Promise<void>>();
  /**
   * onFail runs in flight at most. They are detached, so no gateway limit counts them: a client
   * that makes runs fail fast (bad input reaching a fail step) would otherwise pile up one slow
   * onFail run per request. Past it, the onFail saga is not started and that is logged.
   */
  maxOnFailRuns = MAX_ON_FAIL_RUNS;

  constructor(
    private readonly deps: RunnerDeps,
    sagas: readonly CompiledSaga[],
  ) {
    this.name = deps.runner.name;
    this.deployment = deps.runner.deployment;
    this.streams = deps.runner.streams;
    this.routes = new RouteTable(sagas);
    this.apis = (deps.settings.gateway?.apis ?? [])
      .filter((a) => a.runner === this.name)
      .sort((a, b) => b.path.length - a.path.length);
    this.executor = {
      runner: deps.runner,
      registry: deps.registry,
      values: deps.settings.values,
      secrets: deps.secrets,
      log: deps.log,
      state: deps.state,
    };
    this.dispatchBound = (event, cancel) => this.dispatch(event, cancel);
    this.observer = deps.observer;
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
  async run(req: SagaRequest): Promise<SagaResult> {
    const match = this.routes.match(req.method, req.path);
    // The path is the caller's: never echoed in the problem (issue 9, item 9).
    if (match.kind === 'not-found') return reject('NOT_FOUND', `no saga serves ${req.method} on this path`);
    if (match.kind === 'method-not-allowed') {
      return reject('METHOD_NOT_ALLOWED', `${req.method} is not allowed here (allowed: ${match.allow.join(', ')})`);
    }
    const { saga, params } = match;
    const denied = authorize(saga, req.user);
    if (denied) return denied;
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
    const done = this.inFlight.add(req.requestId, saga.id);
    try {
      const result = await this.startRun(saga, input, context, req, runId, tracer?.step);
      tracer?.end(result);
      return result;
    } finally {
      done();
    }
  }

  /** A gateway run: journaled, else with its outcome recorded (distributed mode), else plain. */
  private async startRun(
    saga: CompiledSaga,
    input: Record<string, unknown>,
    context: RequestContext,
    req: SagaRequest,
    runId: string,
    trace: StepTracer | undefined,
  ): Promise<SagaResult> {
    if (this.deps.journal) return this.startJournaled(this.deps.journal, saga, input, context, req, runId, trace);
    const cancel = req.cancel ?? (req.signal && Cancel.fromSignal(req.signal));
    const outcomes = this.deps.outcomes;
    const lineage = this.rootLineage();
    if (!outcomes) return this.start(saga, input, context, req.deadline, cancel, runId, trace, lineage);
    // Written before the result goes back, never awaited (systems/nats/outcomes.ts).
    const handle = outcomes.begin(scopeOf(req), req.requestId, correlationOf(req));
    const result = await this.start(saga, input, context, req.deadline, cancel, runId, trace, lineage);
    outcomes.end(handle, result);
    return result;
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
  ): Promise<SagaResult> {
    const deadline = req.deadline;
    const scope = scopeOf(req);
    const correlation = correlationOf(req);
    // The start record is committed before the run's first event is dispatched (`started`), so
    // that a process killed mid-run always leaves a record to resume or undo it from; the start
    // records of concurrent runs share a group commit (journal.ts). If the run's record cannot be
    // written, the caller gets that failure (503 when the store is down), never the saga's result.
    const entry = journal.open(saga.id, runId, input, context, scope, correlation);
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
      ...(this.deps.waits ? { park: this.waitRunner().parkHook(saga, entry, runId) } : {}), // waits:
    });
    if (result.outcome === 'WAITING') return result; // waits: parked; the journal says so already
    // No answer without its record (issue 26 item 1): an outcome the journal did not take is
    // written later (journal.ts settle), and the caller gets 503, never the result.
    const settled = await journal.settle(entry, result);
    if (settled !== 'written') return unrecorded(settled);
    this.afterRun(saga, input, context, runId, result, lineage);
    return result;
  }

  /** The lineage of a request's own run: the first of its budget (core/lineage.ts). */
  private rootLineage(): Lineage {
    return rootLineage(this.deps.runner.maxRunsPerRequest);
  }

  /** Remove finished runs past `journalRetention` from the journal (bounded; journal.ts prune). */
  pruneJournal(now = Date.now()): Promise<number> {
    const journal = this.deps.journal;
    if (!journal) return Promise.resolve(0);
    return journal.prune(this.deps.runner.journalRetentionMs ?? DEFAULT_JOURNAL_RETENTION_MS, now);
  }

  /**
   * Take over the journaled runs whose process is gone and finish them, each from the step
   * after its last completed event step (with a fresh saga timeout). Resolves when they ended.
   */
  async resumeOrphans(isLive: (instance: string) => boolean): Promise<number> {
    const journal = this.deps.journal;
    if (!journal) return 0;
    const records = await journal.claimOrphans(isLive);
    await Promise.all(
      records.map(async (rec) => {
        const d = rec.data as JournalData;
        const entry: JournalEntry = { id: rec.id, version: rec.version };
        const saga = this.routes.byId(d.sagaId);
        const context: RequestContext = {
          request: d.context.request,
          user: d.context.user,
          ...(d.lastStatus ? { status: d.lastStatus } : {}),
          ...(d.lastError ? { error: d.lastError } : {}),
        };
        let result: SagaResult;
        // Only gateway runs are journaled: a resumed run is a request's own run.
        const lineage = this.rootLineage();
        if (!saga) {
          result = reject('NOT_FOUND', `saga "${d.sagaId}" is not served by runner ${this.name} any more`);
        } else {
          const unwinding = d.unwind && d.undo ? d.unwind : undefined;
          this.deps.log.info(
            { saga: d.sagaId, runId: d.runId, step: unwinding ? 'unwind' : (d.next ?? 'start') },
            'resuming journaled saga',
          );
          const progress = { undo: d.undo ?? [], visits: d.visits ?? {} };
          const waited = d['waitResult'] as WaitResolution | null | undefined; // waits: resumed from a wait
          result = await runSaga(this.engineDeps(), {
            saga,
            input: d.input,
            context,
            deadline: Date.now() + saga.timeoutMs,
            runId: d.runId,
            lineage,
            journal: journal.stepper(entry),
            unwindJournal: journal.unwinder(entry, unwinding),
            ...(unwinding && d.undo
              ? { resumeUnwind: { undo: d.undo, done: unwinding.done, result: unwinding.result } }
              : {}),
            ...(!unwinding && d.next && d.payload
              ? { resume: { step: d.next, payload: d.payload, progress, ...(waited ? { waited } : {}) } }
              : {}),
            ...(this.deps.waits ? { park: this.waitRunner().parkHook(saga, entry, d.runId) } : {}), // waits:
          });
        }
        if (result.outcome === 'WAITING') return; // waits: parked again
        await journal.finish(entry, result);
        if (saga) this.afterRun(saga, d.input, context, d.runId, result, lineage);
      }),
    );
    return records.length;
  }

  /** waits: what resuming a parked run needs of this runner (runner/waits/resume.ts). */
  waitRunner(): WaitRunner & { readonly deployment: string } {
    return waitRunnerOf(this, this.deps, {
      engineDeps: () => this.engineDeps(),
      saga: (id) => this.routes.byId(id),
      rootLineage: () => this.rootLineage(),
      afterRun: (saga, d, context, result, lineage) => this.afterRun(saga, d.input, context, d.runId, result, lineage),
    });
  }

  private engineDeps() {
    return {
      dispatch: this.dispatchBound,
      log: this.deps.log,
      maxSteps: this.deps.runner.maxSteps,
      ...(this.observer ? { observer: this.observer } : {}),
    };
  }

  /**
   * After a run: a FAIL or TIMEOUT outcome (its compensations done) starts the saga's `onFail`
   * saga, detached: the caller's response does not wait for it, and its failure is logged,
   * never returned. Its payload is `{ parameters: <the failed run's input>, error, runId }`; its
   * run id is `<runId>.onFail`, so its idempotency keys are the failed run's and cannot collide.
   * A run that descends from an onFail run, by StartSaga at any depth, starts no onFail (no
   * chains, no loops, no fan-out: core/lineage.ts); a request's onFail runs share one budget.
   */
  private afterRun(
    saga: CompiledSaga,
    input: Record<string, unknown>,
    context: RequestContext,
    runId: string,
    result: SagaResult,
    lineage: Lineage,
  ): void {
    if (saga.onFail === undefined || (result.outcome !== 'FAIL' && result.outcome !== 'TIMEOUT')) return;
    const target = this.routes.byId(saga.onFail);
    const log = { saga: saga.id, runId, onFail: saga.onFail };
    if (!target) {
      this.deps.log.error(log, 'onFail saga not found');
      return;
    }
    if (lineage.onFail) {
      this.deps.log.info(log, 'onFail saga not started: the run descends from an onFail run');
      return;
    }
    if (this.detached.size >= this.maxOnFailRuns) {
      this.deps.log.warn({ ...log, running: this.detached.size }, 'onFail saga not started: too many running');
      return;
    }
    const own = onFailLineage(lineage);
    if (!own) {
      this.deps.log.warn(log, "onFail saga not started: the request's onFail run budget is spent");
      return;
    }
    const error = result.error ?? { code: 'SAGA_FAILED', message: 'the saga failed' };
    this.deps.log.info(log, 'starting onFail saga');
    const running = runSaga(this.engineDeps(), {
      saga: target,
      input,
      payload: { parameters: input, error, runId },
      context: { request: context.request, user: context.user },
      deadline: Date.now() + target.timeoutMs,
      runId: `${runId}.onFail`,
      lineage: own,
    }).then((r) => {
      if (r.outcome === 'SUCCESS' || r.outcome === 'ACK')
        this.deps.log.info({ ...log, outcome: r.outcome }, 'onFail saga ended');
      else this.deps.log.warn({ ...log, outcome: r.outcome, code: r.error?.code }, 'onFail saga failed');
    });
    this.detached.add(running);
    void running.finally(() => this.detached.delete(running));
  }

  /** Wait (at most `timeoutMs`) for the onFail sagas still running, before the process closes its states. */
  async drain(timeoutMs = 10_000): Promise<void> {
    if (this.detached.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([Promise.allSettled([...this.detached]), late]);
    clearTimeout(timer);
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
    });
    if (saga.onFail === undefined) return run;
    return run.then((result) => {
      this.afterRun(saga, input, context, runId, result, lineage);
      return result;
    });
  }

  /** Execute an event that reached this runner (its own `local` events, or a stream it consumes). */
  execute(event: EventMessage, binding: StreamBindingSettings | undefined, cancel: Cancellable): Promise<EventReply> {
    return executeEvent(this.executor, event, binding, cancel);
  }

  /** Orchestrator side: where an event step's event goes. */
  private dispatch(event: EventMessage, cancel: Cancellable): Promise<EventReply> {
    if (event.stream === 'local') return this.execute(event, undefined, cancel);
    return this.deps.route(event, cancel);
  }

  /** The environment built-in handlers of this runner get. */
  handlerEnv(): HandlerEnv {
    return {
      settings: this.deps.settings,
      runner: this.deps.runner,
      log: this.deps.log,
      state: this.deps.state,
      runEvent: (meta: RawEventMeta, payload: Payload, parent: ActionContext, params?: Record<string, unknown>) => {
        const event: EventMessage = {
          id: randomUUID(),
          runId: parent.idempotencyKey,
          stepId: `${meta.handler ?? ''}.${meta.action}`,
          idempotencyKey: `${parent.idempotencyKey}:${meta.handler ?? ''}.${meta.action}`,
          stream: meta.stream ?? 'local',
          meta,
          payload,
          context: { ...parent.request },
          ...(params !== undefined ? { params } : {}),
          deadline: Date.now() + 60_000,
        };
        const lineage = parentRunOf(parent)?.lineage;
        if (lineage) event.lineage = lineage;
        return this.dispatch(event, cancelOf(parent));
      },
      // A nested saga is entered with the caller's identity: its roles are checked exactly as
      // the gateway's request would check them (a path may come from the request), and a path
      // without a method is looked up with the calling request's method.
      runSaga: async (target, input, parent) => {
        const caller = parent.request;
        const byId = target.saga !== undefined ? this.routes.byId(target.saga) : undefined;
        const m =
          byId === undefined && target.path !== undefined
            ? this.routes.match(target.method ?? caller.request.method, target.path)
            : undefined;
        const saga = byId ?? (m?.kind === 'found' ? m.saga : undefined);
        if (saga) {
          // By path: the method it was looked up with; by id: every method of the saga.
          const methods = m?.kind === 'found' ? [target.method ?? caller.request.method] : saga.methods;
          const denied =
            protect(this.apis, target.path ?? saga.path, methods, caller.user) ?? authorize(saga, caller.user);
          if (denied) return denied;
          const full = m?.kind === 'found' ? { ...input, ...m.params } : input;
          // The nested run is one more run of the request (its budget), keeps the request's
          // lineage (an onFail run's descendants start no onFail) and gets an id derived from
          // the step that started it (execute.ts parentRunOf).
          const from = parentRunOf(parent);
          const lineage = from?.lineage ?? this.rootLineage();
          takeRun(lineage, `saga.StartSaga of ${saga.id}`);
          const runId = from?.runId ?? randomUUID();
          return this.start(saga, full, { ...caller }, undefined, cancelOf(parent), runId, undefined, lineage);
        }
        // The target may come from the request: logged for the saga's author, never echoed to the caller.
        this.deps.log.debug({ saga: target.saga, path: target.path }, 'saga.StartSaga: no such saga');
        throw new SagawayError('NOT_FOUND', `saga.StartSaga: no such saga on runner ${this.name}`, { http: 500 });
      },
    };
  }
}

/** A saga's roles against the caller (gateway requests and saga.StartSaga alike): 401, 403 or undefined. */
function authorize(saga: CompiledSaga, user: Principal | null): SagaResult | undefined {
  return refusal(roleRefusal(saga.roles, user));
}

/**
 * The protection the gateway gives a path (its API entry: `public`, `roles`) applied to a nested
 * saga: a StartSaga target may come from the request, and reaching a saga through a public saga
 * must not skip what reaching it directly would require (the gateway's rule: a public entry needs
 * nothing, another needs a credential and, when it lists roles, one of them). A path no API entry
 * covers is only reachable through sagas (internal composition) and has no API protection.
 * Entries on one path with disjoint methods (issue 19, item 5): the entries that serve `methods`
 * all apply (none of them: every entry of the path, the strictest reading).
 */
function protect(
  apis: readonly ApiSettings[],
  path: string,
  methods: readonly string[],
  user: Principal | null,
): SagaResult | undefined {
  const covers = (a: ApiSettings) => a.path === '/' || path === a.path || path.startsWith(a.path + '/');
  const first = apis.find(covers);
  if (!first) return undefined;
  const group = apis.filter((a) => a.path === first.path);
  const serving = group.filter((a) => methods.some((m) => allowsMethod(a, m)));
  for (const api of serving.length > 0 ? serving : group) {
    if (api.public) continue;
    const denied = refusal(!user || user.anonymous ? 'UNAUTHORIZED' : roleRefusal(api.roles, user));
    if (denied) return denied;
  }
  return undefined;
}

/** Whether an API entry serves `method` (no `methods` = any; HEAD goes with GET). */
function allowsMethod(api: ApiSettings, method: string): boolean {
  if (api.methods === undefined) return true;
  const m = method.toUpperCase();
  return api.methods.some((x) => x.toUpperCase() === m || (m === 'HEAD' && x.toUpperCase() === 'GET'));
}

function refusal(code: 'UNAUTHORIZED' | 'FORBIDDEN' | undefined): SagaResult | undefined {
  if (code === undefined) return undefined;
  return reject(code, code === 'UNAUTHORIZED' ? 'authentication required' : 'a required role is missing');
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

/**
 * The answer of a run whose outcome the journal did not take: 503, marked `ran: unknown` so that
 * the gateway keeps an Idempotency-Key bound to the run (its outcome is read from the journal).
 */
function unrecorded(why: 'taken-over' | 'retrying'): SagaResult {
  const error =
    why === 'retrying'
      ? toErrorInfo(
          new SagawayError(
            'STATE_UNAVAILABLE',
            'the outcome of the saga run could not be recorded; it is written when the journal is back, and can then be read at /api/status/<requestId>',
          ),
        )
      : toErrorInfo(
          new SagawayError(
            'RUNNER_UNAVAILABLE',
            'this saga run was taken over by another runner; its outcome will be at /api/status/<requestId>',
          ),
        );
  return { outcome: 'FAIL', http: 503, error, ran: 'unknown' };
}

function reject(code: string, message: string): SagaResult {
  const error = toErrorInfo(new SagawayError(code, message));
  return { outcome: 'FAIL', http: error.http ?? 500, error };
}
