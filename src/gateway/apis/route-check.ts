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
  /** index into gateway.apis of the (first) entry that maps the saga's path to its runner */
  api?: number;
  /**
   * every entry through which the gateway reaches the saga, with the saga's methods it serves
   * (entries on one path with disjoint methods: each method has its own entry, and its own auth)
   */
  via: { api: number; methods: string[] }[];
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

/** Methods that change something: a public entry is never to be widened to them by advice. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

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
      const segments = segmentsOf(saga.path);
      const api = map.match(segments);
      const add = `add { path: ${suggestedPrefix(saga.path)}, runner: ${runner} } to gateway.apis`;
      if (!api && internal.has(saga.id)) {
        sagas.push({ runner, saga, via: [] });
        continue;
      }
      if (!api) {
        sagas.push({ runner, saga, via: [], problem: 'no gateway.apis entry covers its path', fix: add });
        continue;
      }
      // Each of the saga's methods is served by the entry that allows it (api-map.ts).
      const methods = saga.methods ?? ['GET'];
      const via: SagaRoute['via'] = [];
      for (const m of methods) {
        const entry = map.match(segments, m);
        if (!entry || !ApiMap.allows(entry, m) || entry.settings.runner !== runner) continue;
        const i = index.get(entry.settings) as number;
        const known = via.find((v) => v.api === i);
        if (known) known.methods.push(m);
        else via.push({ api: i, methods: [m] });
      }
      if (via.length > 0) {
        sagas.push({ runner, saga, api: via[0]!.api, via });
        continue;
      }
      if (api.settings.runner !== runner && methods.every((m) => map.match(segments, m)?.settings.runner !== runner)) {
        sagas.push({
          runner,
          saga,
          via,
          problem: `its path falls under API ${api.prefix}, which maps to runner "${api.settings.runner}"`,
          fix: add,
        });
        continue;
      }
      const i = index.get(api.settings) as number;
      sagas.push({
        runner,
        saga,
        api: i,
        via,
        problem: `API ${api.prefix} allows none of its methods (${methods.join(', ')})`,
        fix: methodsFix(apis, api.prefix, runner, methods, i),
      });
    }
  }
  const open = authConfigured(settings);
  const closedApis = open ? [] : apis.flatMap((a, i) => (a.public ? [] : [i]));
  return { sagas, closedApis };
}

/**
 * What to do when an API entry allows none of a saga's methods. Widening a public entry to a
 * method that writes would make the write public (issue 19, item 5): then the advice is an entry
 * of their own, with its own auth.
 */
function methodsFix(
  apis: readonly ApiSettings[],
  prefix: string,
  runner: string,
  methods: string[],
  i: number,
): string {
  const writes = methods.filter((m) => !SAFE_METHODS.has(m));
  const publicEntry = apis.some((a) => a.public && segmentsOf(a.path).join('/') === segmentsOf(prefix).join('/'));
  const own = `add an entry of their own to gateway.apis, { path: ${prefix}, runner: ${runner}, methods: [${methods.join(', ')}] } with its roles (entries on one path with disjoint methods each have their own auth)`;
  if (publicEntry && writes.length > 0) return own;
  return `add them to gateway.apis[${i}].methods, or ${own}`;
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
