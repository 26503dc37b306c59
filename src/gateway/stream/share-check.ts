import type { Settings, SagaDefinition, RunnerSettings } from '../../config/settings.js';
import { routeReport, type RouteWarning } from '../apis/route-check.js';

/**
 * The rule of `share: all` (docs/streams.md#shared-polls), checked by `sagaway validate` (and
 * every command that loads a configuration with its checks): one saga run serves every caller of
 * the API, so it runs with no user, and a saga that reads `$user` or `@.user` there would see
 * nothing (or, were it given one caller's user, show that caller's data to all). Such a saga is
 * an error, located at the step that reads the user.
 */

/** Keys whose strings are labels, never evaluated. */
const LABELS = new Set(['id', 'name', 'description', 'stroke', 'fill', 'to']);
/** `$user` as a JSONata variable, `@.user` as an inject path. */
const READS_USER = /\$user\b|@\.user\b/;

/** The path (below `at`) of the first string in `value` that reads the user, if any. */
function userRead(value: unknown, at: (string | number)[], depth = 0): (string | number)[] | undefined {
  if (typeof value === 'string') return READS_USER.test(value) ? at : undefined;
  if (value === null || typeof value !== 'object' || depth > 32) return undefined;
  for (const [k, v] of Object.entries(value)) {
    if (LABELS.has(k) && typeof v === 'string') continue;
    const key = Array.isArray(value) ? Number(k) : k;
    const found = userRead(v, [...at, key], depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** Where a saga (or a structural action one of its steps uses) reads the user. */
function sagaUserRead(
  saga: SagaDefinition,
  runner: RunnerSettings,
): { file: string; at: (string | number)[] } | undefined {
  const steps = saga.steps ?? [];
  for (const [i, step] of steps.entries()) {
    const own = userRead(step, [...saga.source.at, 'steps', i]);
    if (own) return { file: saga.source.file, at: own };
    const action = (step as { eventMeta?: { action?: unknown } }).eventMeta?.action;
    const structural = typeof action === 'string' ? runner.actions[action] : undefined;
    if (structural && userRead(structural.meta, []))
      return { file: saga.source.file, at: [...saga.source.at, 'steps', i, 'eventMeta', 'action'] };
  }
  return undefined;
}

/** The sagas served under an API with `share: all` that read the user, as located errors. */
export function shareAllUserReads(settings: Settings): RouteWarning[] {
  const apis = settings.gateway.apis;
  const out: RouteWarning[] = [];
  for (const route of routeReport(settings).sagas) {
    const api = route.via
      .map((v) => apis[v.api]!)
      .find((a) => (a.stream?.share ?? settings.gateway.stream.share) === 'all');
    if (!api) continue;
    const runner = settings.runners[route.runner];
    const read = runner && sagaUserRead(route.saga, runner);
    if (!read) continue;
    out.push({
      file: read.file,
      at: read.at,
      message:
        `saga "${route.saga.id}" reads the user ($user or @.user), but API ${api.path} streams with share: all, ` +
        'where one saga run serves every caller and runs with no user; use share: caller for a per-user feed',
    });
  }
  return out;
}
