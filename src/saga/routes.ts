import { isForbiddenKey } from '../core/path.js';
import type { CompiledSaga } from './graph.js';

/**
 * Which saga serves a request path (DESIGN §3): the saga's `path` may hold `:name` parameters.
 * When several sagas match, the one with more literal segments wins, then the order written.
 */

/** What routing needs of a saga (the gateway routes raw saga definitions, the runner compiled ones). */
export interface Routable {
  id: string;
  path: string;
  methods: readonly string[];
}

interface Route<S extends Routable> {
  saga: S;
  segments: readonly { literal?: string; param?: string }[];
  literals: number;
}

export type RouteMatch<S extends Routable = CompiledSaga> =
  | { kind: 'found'; saga: S; params: Record<string, string> }
  | { kind: 'not-found' }
  | { kind: 'method-not-allowed'; allow: string[] };

/** Split a path into non-empty segments (`/todos/42/` -> ['todos', '42']). */
function split(path: string): string[] {
  // the gateway's paths (`/items/42`) have no empty segment: one split, no filter
  if (path.length > 1 && path.charCodeAt(0) === 47 && path.charCodeAt(path.length - 1) !== 47 && !path.includes('//'))
    return path.slice(1).split('/');
  return path.split('/').filter((s) => s !== '');
}

/** The routes of a runner's sagas. */
export class RouteTable<S extends Routable = CompiledSaga> {
  private readonly routes: Route<S>[];

  constructor(sagas: readonly S[]) {
    this.routes = sagas
      .map((saga) => {
        const segments = split(saga.path).map((s) => (s.startsWith(':') ? { param: s.slice(1) } : { literal: s }));
        return { saga, segments, literals: segments.filter((s) => s.literal !== undefined).length };
      })
      .sort((a, b) => b.literals - a.literals);
  }

  /** Match a request; HEAD is served by sagas that allow GET. */
  match(method: string, path: string): RouteMatch<S> {
    const parts = split(path);
    let allow: Set<string> | undefined; // only a path served for other methods needs it
    for (const route of this.routes) {
      const params = matchSegments(route, parts);
      if (!params) continue;
      const methods = route.saga.methods;
      if (methods.includes(method) || (method === 'HEAD' && methods.includes('GET'))) {
        return { kind: 'found', saga: route.saga, params };
      }
      allow ??= new Set<string>();
      for (const m of methods) allow.add(m);
    }
    return allow !== undefined && allow.size > 0
      ? { kind: 'method-not-allowed', allow: [...allow] }
      : { kind: 'not-found' };
  }

  /** A saga by id. */
  byId(id: string): S | undefined {
    return this.routes.find((r) => r.saga.id === id)?.saga;
  }
}

function matchSegments(route: Route<Routable>, parts: string[]): Record<string, string> | undefined {
  if (route.segments.length !== parts.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < parts.length; i++) {
    const seg = route.segments[i]!;
    const part = parts[i]!;
    if (seg.literal !== undefined) {
      if (seg.literal !== part) return undefined;
    } else if (seg.param !== undefined && !isForbiddenKey(seg.param)) {
      // Request paths arrive decoded (the gateway decodes each segment once): never again here.
      params[seg.param] = part;
    }
  }
  return params;
}
