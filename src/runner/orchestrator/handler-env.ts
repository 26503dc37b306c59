import { randomUUID } from 'node:crypto';
import type { RawEventMeta } from '../../config/schema.js';
import type { ApiSettings, RunnerSettings, Settings } from '../../config/settings.js';
import type { Cancellable } from '../../core/cancel.js';
import { SagawayError } from '../../core/errors.js';
import { takeRun, type Lineage } from '../../core/lineage.js';
import type { Logger } from '../../core/logger.js';
import type { EventMessage, EventReply } from '../../core/messages.js';
import { roleRefusal } from '../../core/roles.js';
import type { StepTracer } from '../../core/trace.js';
import type { Payload, Principal, RequestContext, SagaResult } from '../../core/types.js';
import type { ActionContext, HandlerEnv } from '../../handlers/api.js';
import type { CompiledSaga } from '../../saga/graph.js';
import type { State } from '../../states/state.js';
import { cancelOf, parentRunOf } from '../executor/execute.js';
import { authorize, refusal } from './run-answers.js';
import type { RouteTable } from '../../saga/routes.js';

/**
 * The environment a runner gives its built-in handlers (handlers/api.ts HandlerEnv): its
 * settings and states, an event of their own (`runEvent`), and a nested saga (`runSaga`, the
 * saga.StartSaga action) entered with the caller's identity and the protection of its path.
 */

/** What the handler environment needs from the runner. */
export interface HandlerEnvHost {
  /** the runner's name (in errors) */
  name: string;
  settings: Settings;
  runner: RunnerSettings;
  log: Logger;
  state(alias: string): State;
  /** the runner's sagas, by path and by id */
  routes: RouteTable;
  /** the gateway's API entries that map to this runner, longest prefix first */
  apis: readonly ApiSettings[];
  /** the lineage of a request's own run */
  rootLineage(): Lineage;
  /** where an event goes (runner.ts dispatch) */
  dispatch(event: EventMessage, cancel: Cancellable): Promise<EventReply>;
  /** run a saga of this runner (runner.ts start) */
  start(
    saga: CompiledSaga,
    input: Record<string, unknown>,
    context: RequestContext,
    deadline?: number,
    cancel?: Cancellable,
    runId?: string,
    trace?: StepTracer,
    lineage?: Lineage,
  ): Promise<SagaResult>;
}

/** The environment built-in handlers of this runner get. */
export function handlerEnv(host: HandlerEnvHost): HandlerEnv {
  return {
    settings: host.settings,
    runner: host.runner,
    log: host.log,
    state: host.state,
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
      return host.dispatch(event, cancelOf(parent));
    },
    // A nested saga is entered with the caller's identity: its roles are checked exactly as
    // the gateway's request would check them (a path may come from the request), and a path
    // without a method is looked up with the calling request's method.
    runSaga: async (target, input, parent) => {
      const caller = parent.request;
      const byId = target.saga !== undefined ? host.routes.byId(target.saga) : undefined;
      const m =
        byId === undefined && target.path !== undefined
          ? host.routes.match(target.method ?? caller.request.method, target.path)
          : undefined;
      const saga = byId ?? (m?.kind === 'found' ? m.saga : undefined);
      if (saga) {
        // By path: the method it was looked up with; by id: every method of the saga.
        const methods = m?.kind === 'found' ? [target.method ?? caller.request.method] : saga.methods;
        const denied =
          protect(host.apis, target.path ?? saga.path, methods, caller.user) ?? authorize(saga, caller.user);
        if (denied) return denied;
        const full = m?.kind === 'found' ? { ...input, ...m.params } : input;
        // The nested run is one more run of the request (its budget), keeps the request's
        // lineage (an onFail run's descendants start no onFail) and gets an id derived from
        // the step that started it (execute.ts parentRunOf).
        const from = parentRunOf(parent);
        const lineage = from?.lineage ?? host.rootLineage();
        takeRun(lineage, `saga.StartSaga of ${saga.id}`);
        const runId = from?.runId ?? randomUUID();
        return host.start(saga, full, { ...caller }, undefined, cancelOf(parent), runId, undefined, lineage);
      }
      // The target may come from the request: logged for the saga's author, never echoed to the caller.
      host.log.debug({ saga: target.saga, path: target.path }, 'saga.StartSaga: no such saga');
      throw new SagawayError('NOT_FOUND', `saga.StartSaga: no such saga on runner ${host.name}`, { http: 500 });
    },
  };
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
    const denied = refusal(!user || user.anonymous ? 'UNAUTHORIZED' : roleRefusal(api.roles, user), api.roles);
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
