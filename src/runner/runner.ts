import { randomUUID } from 'node:crypto';
import type { RawEventMeta } from '../config/schema.js';
import type { RunnerSettings, Settings, StreamBindingSettings } from '../config/settings.js';
import { SagawayError, toErrorInfo } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { Payload, RequestContext, SagaRequest, SagaResult } from '../core/types.js';
import { runSaga } from '../saga/engine.js';
import type { CompiledSaga } from '../saga/graph.js';
import type { State } from '../states/state.js';
import type { EventMessage, EventReply } from '../systems/system.js';
import { executeEvent, type ExecutorDeps } from './execute.js';
import type { ActionContext, HandlerEnv } from './handler-api.js';
import type { HandlerRegistry } from './registry.js';
import { RouteTable } from './routes.js';
import type { SecretSource } from './secrets.js';

/** What a runner is built from. */
export interface RunnerDeps {
  settings: Settings;
  runner: RunnerSettings;
  registry: HandlerRegistry;
  secrets: SecretSource;
  log: Logger;
  state(alias: string): State;
  /** deliver an event on a stream other than `local` (the host picks the system); never rejects */
  route(event: EventMessage, signal: AbortSignal): Promise<EventReply>;
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
  private readonly executor: ExecutorDeps;
  private readonly dispatchBound: (event: EventMessage, signal: AbortSignal) => Promise<EventReply>;

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
    this.dispatchBound = (event, signal) => this.dispatch(event, signal);
  }

  /** Whether one of this runner's sagas serves this path (for any method). */
  serves(path: string): boolean {
    return this.routes.match('GET', path).kind !== 'not-found';
  }

  /** Run the saga serving `req.path` (gateway -> runner). Never throws. */
  async run(req: SagaRequest): Promise<SagaResult> {
    const match = this.routes.match(req.method, req.path);
    if (match.kind === 'not-found') return reject('NOT_FOUND', `no saga serves ${req.method} ${req.path}`);
    if (match.kind === 'method-not-allowed') {
      return reject('METHOD_NOT_ALLOWED', `${req.method} is not allowed here (allowed: ${match.allow.join(', ')})`);
    }
    const { saga, params } = match;
    if (saga.roles.length > 0) {
      if (!req.user || req.user.anonymous) return reject('UNAUTHORIZED', 'authentication required');
      if (!saga.roles.some((r) => req.user!.roles.includes(r)))
        return reject('FORBIDDEN', 'a required role is missing');
    }
    const input: Record<string, unknown> = { ...req.input, ...params };
    const context: RequestContext = {
      request: { method: req.method, path: req.path, id: req.requestId, query: req.query },
      user: req.user,
    };
    return this.start(saga, input, context, req.deadline, req.signal);
  }

  /** Run a saga of this runner with a ready input and context (also used by saga.StartSaga). */
  start(
    saga: CompiledSaga,
    input: Record<string, unknown>,
    context: RequestContext,
    deadline?: number,
    signal?: AbortSignal,
  ): Promise<SagaResult> {
    const own = Date.now() + saga.timeoutMs;
    return runSaga(
      { dispatch: this.dispatchBound, log: this.deps.log, maxSteps: this.deps.runner.maxSteps },
      {
        saga,
        input,
        context,
        deadline: deadline === undefined ? own : Math.min(deadline, own),
        ...(signal ? { signal } : {}),
      },
    );
  }

  /** Execute an event that reached this runner (its own `local` events, or a stream it consumes). */
  execute(event: EventMessage, binding: StreamBindingSettings | undefined, signal: AbortSignal): Promise<EventReply> {
    return executeEvent(this.executor, event, binding, signal);
  }

  /** Orchestrator side: where an event step's event goes. */
  private dispatch(event: EventMessage, signal: AbortSignal): Promise<EventReply> {
    if (event.stream === 'local') return this.execute(event, undefined, signal);
    return this.deps.route(event, signal);
  }

  /** The environment built-in handlers of this runner get. */
  handlerEnv(): HandlerEnv {
    return {
      settings: this.deps.settings,
      runner: this.deps.runner,
      log: this.deps.log,
      state: this.deps.state,
      runEvent: (meta: RawEventMeta, payload: Payload, parent: ActionContext) => {
        const event: EventMessage = {
          id: randomUUID(),
          runId: parent.idempotencyKey,
          stepId: `${meta.handler ?? ''}.${meta.action}`,
          idempotencyKey: `${parent.idempotencyKey}:${meta.handler ?? ''}.${meta.action}`,
          stream: meta.stream ?? 'local',
          meta,
          payload,
          context: { ...parent.request },
          deadline: Date.now() + 60_000,
        };
        return this.dispatch(event, parent.signal);
      },
      runSaga: async (target, input, parent) => {
        const saga = target.saga !== undefined ? this.routes.byId(target.saga) : undefined;
        if (saga) return this.start(saga, input, { ...parent.request }, undefined, parent.signal);
        if (target.path !== undefined) {
          const m = this.routes.match(target.method ?? 'GET', target.path);
          if (m.kind === 'found')
            return this.start(m.saga, { ...input, ...m.params }, { ...parent.request }, undefined, parent.signal);
        }
        throw new SagawayError('NOT_FOUND', `no saga ${target.saga ?? target.path ?? ''} on runner ${this.name}`, {
          http: 500,
        });
      },
    };
  }
}

function reject(code: string, message: string): SagaResult {
  const error = toErrorInfo(new SagawayError(code, message));
  return { outcome: 'FAIL', http: error.http ?? 500, error };
}
