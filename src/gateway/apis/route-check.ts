import type { ApiSettings, SagaDefinition, Settings } from '../../config/settings.js';
import { ApiMap } from './api-map.js';

/**
 * What the gateway will serve, worked out from the settings alone (no process started): which
 * API entry reaches which sagas, which sagas no API reaches, and which APIs nobody can call.
 * `sagaway routes` prints it; `validate`, `start` and `gateway` turn the traps into warnings
 * (an API that answers 401 to everyone, a saga that answers 404 under the gateway while
 * `sagaway run` finds it).
 */

/** A saga, and the API entry through which the gateway reaches it (none: unreachable). */
export interface SagaRoute {
  runner: string;
  saga: SagaDefinition;
  /** index into gateway.apis of the entry that maps the saga's path to its runner */
  api?: number;
  /** why the gateway cannot reach it, when `api` is absent or its methods exclude the saga's */
  problem?: string;
  /** what to change so that it can */
  fix?: string;
}

/** The whole table. */
export interface RouteReport {
  sagas: SagaRoute[];
  /** indexes of API entries that are neither public nor covered by any configured auth */
  closedApis: number[];
}

/** Whether any credential can be presented to the gateway at all. */
export function authConfigured(settings: Settings): boolean {
  const auth = settings.gateway.auth;
  return auth.jwt !== undefined || auth.apiKeys.length > 0;
}

/** The saga path's segments, as the API mapping sees them (a `:param` is matched literally). */
function segmentsOf(path: string): string[] {
  return path.split('/').filter((s) => s !== '');
}

/** The API prefix to suggest for a saga path: its first segment, when that is not a `:param`. */
function suggestedPrefix(path: string): string {
  const first = segmentsOf(path)[0];
  return first === undefined || first.startsWith(':') ? '/' : `/${first}`;
}

/** Work out the route table of a configuration. */
export function routeReport(settings: Settings): RouteReport {
  const apis = settings.gateway.apis;
  const map = new ApiMap(apis);
  const index = new Map<ApiSettings, number>(apis.map((a, i) => [a, i]));
  const sagas: SagaRoute[] = [];
  for (const [runner, r] of Object.entries(settings.runners)) {
    // A saga that another one names as its `onFail` is started by the runner, not by requests:
    // that no API entry covers it is what its author wants.
    const internal = new Set(r.sagas.map((s) => s.onFail?.saga));
    for (const saga of r.sagas) {
      const api = map.match(segmentsOf(saga.path));
      const add = `add { path: ${suggestedPrefix(saga.path)}, runner: ${runner} } to gateway.apis`;
      if (!api && internal.has(saga.id)) {
        sagas.push({ runner, saga });
        continue;
      }
      if (!api) {
        sagas.push({ runner, saga, problem: 'no gateway.apis entry covers its path', fix: add });
        continue;
      }
      const i = index.get(api.settings) as number;
      if (api.settings.runner !== runner) {
        sagas.push({
          runner,
          saga,
          problem: `its path falls under API ${api.prefix}, which maps to runner "${api.settings.runner}"`,
          fix: add,
        });
        continue;
      }
      const methods = saga.methods ?? ['GET'];
      if (!methods.some((m) => ApiMap.allows(api, m))) {
        sagas.push({
          runner,
          saga,
          api: i,
          problem: `API ${api.prefix} allows none of its methods (${methods.join(', ')})`,
          fix: `add them to gateway.apis[${i}].methods`,
        });
        continue;
      }
      sagas.push({ runner, saga, api: i });
    }
  }
  const open = authConfigured(settings);
  const closedApis = open ? [] : apis.flatMap((a, i) => (a.public ? [] : [i]));
  return { sagas, closedApis };
}

/** A warning located at a path of the configuration file. */
export interface RouteWarning {
  file: string;
  at: (string | number)[];
  message: string;
}

/** The traps of a configuration, as warnings naming the API or the saga. */
export function routeWarnings(settings: Settings, report: RouteReport = routeReport(settings)): RouteWarning[] {
  const out: RouteWarning[] = [];
  for (const i of report.closedApis) {
    const api = settings.gateway.apis[i]!;
    out.push({
      file: settings.file,
      at: ['gateway', 'apis', i],
      message:
        `API ${api.path} is neither public nor covered by auth: no gateway.auth is configured, so every ` +
        'request to it is answered 401. Set `public: true` on it, or configure gateway.auth (jwt or apiKeys)',
    });
  }
  for (const s of report.sagas) {
    if (s.problem === undefined) continue;
    out.push({
      file: s.saga.source.file,
      at: [...s.saga.source.at, 'path'],
      message:
        `saga "${s.saga.id}" (${s.saga.path}) of runner "${s.runner}" is not served by the gateway ` +
        `(${s.problem}): only \`sagaway run\` reaches it; ${s.fix ?? ''}`,
    });
  }
  return out;
}

/** The paths of the sagas that no API entry covers (for the gateway's 404 detail). */
export function unmappedSagaPaths(settings: Settings): string[] {
  const apis = new ApiMap(settings.gateway.apis);
  const out: string[] = [];
  // `?? {}`: gateways built in tests from partial settings have no runners at all.
  for (const r of Object.values(settings.runners ?? {}))
    for (const saga of r.sagas) if (!apis.match(segmentsOf(saga.path))) out.push(saga.path);
  return out;
}
