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
import { runSaga } from '../../saga/engine.js';
import type { CompiledSaga } from '../../saga/graph.js';
import type { State } from '../../states/state.js';
import type { EventMessage, EventReply } from '../../core/messages.js';
import { cancelOf, executeEvent, type ExecutorDeps } from '../executor/execute.js';
import type { Journal, JournalData, JournalEntry } from './journal.js';
import type { ActionContext, HandlerEnv } from '../../handlers/api.js';
import type { HandlerRegistry } from '../executor/registry.js';
import { RouteTable } from './routes.js';
import type { SecretSource } from '../executor/secrets.js';

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
}

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
    if (this.deps.journal) return this.startJournaled(this.deps.journal, saga, input, context, req);
    return this.start(saga, input, context, req.deadline, req.cancel ?? (req.signal && Cancel.fromSignal(req.signal)));
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
  ): Promise<SagaResult> {
    const deadline = req.deadline;
    const runId = randomUUID();
    // The gateway names the caller's scope (it knows the source address of anonymous callers);
    // a request from elsewhere (a test, an older gateway) is scoped by its principal alone.
    const scope = isWireId(req.caller, 2048) ? req.caller : callerKey(req.user, 'local');
    const correlation = isWireId(req.correlationId, 128) ? req.correlationId : undefined;
    // No write before the first step: the start record goes with the run's first journal write
    // (journal.ts open()). If the run's record cannot be written, the caller gets that failure
    // (503 when the store is down), never the saga's result.
    const entry = journal.open(saga.id, runId, input, context, scope, correlation);
    const own = Date.now() + saga.timeoutMs;
    const result = await runSaga(this.engineDeps(), {
      saga,
      input,
      context,
      deadline: deadline === undefined ? own : Math.min(deadline, own),
      runId,
      journal: journal.stepper(entry),
    });
    try {
      await journal.settle(entry, result);
    } catch (err) {
      const error = toErrorInfo(err);
      return { outcome: 'FAIL', http: error.http ?? 503, error };
    }
    return result;
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
        if (!saga) {
          result = reject('NOT_FOUND', `saga "${d.sagaId}" is not served by runner ${this.name} any more`);
        } else {
          this.deps.log.info({ saga: d.sagaId, runId: d.runId, step: d.next ?? 'start' }, 'resuming journaled saga');
          result = await runSaga(this.engineDeps(), {
            saga,
            input: d.input,
            context,
            deadline: Date.now() + saga.timeoutMs,
            runId: d.runId,
            journal: journal.stepper(entry),
            ...(d.next && d.payload ? { resume: { step: d.next, payload: d.payload } } : {}),
          });
        }
        await journal.finish(entry, result);
      }),
    );
    return records.length;
  }

  private engineDeps() {
    return { dispatch: this.dispatchBound, log: this.deps.log, maxSteps: this.deps.runner.maxSteps };
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
  ): Promise<SagaResult> {
    const own = Date.now() + saga.timeoutMs;
    return runSaga(
      { dispatch: this.dispatchBound, log: this.deps.log, maxSteps: this.deps.runner.maxSteps },
      {
        saga,
        input,
        context,
        deadline: deadline === undefined ? own : Math.min(deadline, own),
        ...(cancel ? { cancel } : {}),
      },
    );
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
          const denied = protect(this.apis, target.path ?? saga.path, caller.user) ?? authorize(saga, caller.user);
          if (denied) return denied;
          const full = m?.kind === 'found' ? { ...input, ...m.params } : input;
          return this.start(saga, full, { ...caller }, undefined, cancelOf(parent));
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
 */
function protect(apis: readonly ApiSettings[], path: string, user: Principal | null): SagaResult | undefined {
  const api = apis.find((a) => a.path === '/' || path === a.path || path.startsWith(a.path + '/'));
  if (!api || api.public) return undefined;
  return refusal(!user || user.anonymous ? 'UNAUTHORIZED' : roleRefusal(api.roles, user));
}

function refusal(code: 'UNAUTHORIZED' | 'FORBIDDEN' | undefined): SagaResult | undefined {
  if (code === undefined) return undefined;
  return reject(code, code === 'UNAUTHORIZED' ? 'authentication required' : 'a required role is missing');
}

/** A string field of a request that came over the broker, within its bound. */
function isWireId(value: unknown, max: number): value is string {
  return typeof value === 'string' && value !== '' && value.length <= max;
}

function reject(code: string, message: string): SagaResult {
  const error = toErrorInfo(new SagawayError(code, message));
  return { outcome: 'FAIL', http: error.http ?? 500, error };
}
