import type { RunnerSettings } from '../../config/settings.js';
import { roleRefusal, roleRefusalDetail } from '../../core/roles.js';
import type { Principal } from '../../core/types.js';
import { RouteTable, type Routable } from '../../saga/routes.js';
import { NOT_STREAMABLE } from '../../saga/wait-plan.js';

/**
 * The sagas of each runner as the gateway's configuration lists them, so that the stream form
 * can refuse a request no saga would serve (404, 405, 401, 403) before the stream opens (DESIGN
 * §10): an EventSource then stops instead of retrying an `event: error` forever. Same matching
 * as the runner (saga/routes.ts). A runner whose sagas this configuration does not list is
 * not checked here; the runner still answers, then as an `event: error`.
 */

interface SagaRoute extends Routable {
  roles: readonly string[];
  /** whether the saga has a wait step (CompiledSaga.waits, found when the plan was compiled) */
  waits: boolean;
}

/** Why no saga would serve a request. */
export type SagaRefusal =
  | { code: 'NOT_FOUND' }
  | { code: 'UNAUTHORIZED' | 'FORBIDDEN'; detail: string }
  | { code: 'METHOD_NOT_ALLOWED'; allow: string }
  | { code: 'WAIT_NOT_STREAMABLE'; detail: string };

/** Route tables of the configured runners. */
export class SagaRoutes {
  private readonly byRunner = new Map<string, RouteTable<SagaRoute>>();

  constructor(runners: Readonly<Record<string, RunnerSettings>>) {
    for (const [name, runner] of Object.entries(runners)) {
      if (runner.plans.length === 0) continue;
      this.byRunner.set(name, new RouteTable<SagaRoute>(runner.plans));
    }
  }

  /**
   * The refusal the runner would answer for this request, or undefined (served, or not known
   * here). `stream`: the stream form, which a saga with a wait step refuses (after the roles, so
   * that a caller without them learns nothing of the saga).
   */
  refusal(runner: string, method: string, path: string, principal: Principal, stream = false): SagaRefusal | undefined {
    const table = this.byRunner.get(runner);
    if (!table) return undefined;
    const match = table.match(method, path);
    if (match.kind === 'not-found') return { code: 'NOT_FOUND' };
    if (match.kind === 'method-not-allowed') return { code: 'METHOD_NOT_ALLOWED', allow: match.allow.join(', ') };
    const refused = roleRefusal(match.saga.roles, principal);
    if (refused) return { code: refused, detail: roleRefusalDetail(refused, match.saga.roles) };
    return stream && match.saga.waits ? { code: 'WAIT_NOT_STREAMABLE', detail: NOT_STREAMABLE } : undefined;
  }
}
