import type { ApiSettings } from '../../config/settings.js';

/**
 * The API mapping of DESIGN §3: a path prefix (matched by whole segments) selects a runner; the
 * longest matching prefix wins and `/` maps everything. Compiled once into a Map keyed by the
 * normalised prefix, so a lookup is at most one Map probe per path segment.
 *
 * Several entries may share a prefix when their `methods` are disjoint (issue 19, item 5: GET
 * public, POST with roles): the request's method picks the entry, and with it the auth. Entries
 * whose methods overlap are refused at load (config/compile.ts, API_METHODS_OVERLAP), so the
 * first-entry-wins rule below is never what decides between two entries of a valid file.
 */

/** A compiled API entry. */
export interface CompiledApi {
  readonly settings: ApiSettings;
  /** normalised prefix, `/` or `/a/b` */
  readonly prefix: string;
  /** allowed methods (HEAD implied by GET); undefined = any */
  readonly methods?: ReadonlySet<string>;
  /** value of the `Allow` header of a 405: the methods of every entry on this prefix */
  readonly allow: string;
}

/** All methods the gateway routes. */
export const ROUTED_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

function normalise(path: string): string {
  const segs = path.split('/').filter((s) => s !== '');
  return '/' + segs.join('/');
}

/** The `detail` of a 404 for a path no API serves. */
export const NO_API_DETAIL = 'no API serves this path';

/** The `detail` of a 404 for a path that a saga has but that no API entry maps to its runner. */
export const UNMAPPED_SAGA_DETAIL =
  'no API serves this path: a saga of this configuration has it, but no gateway.apis entry maps it to its runner ' +
  '(`sagaway routes` shows the table)';

/** Compiled API mapping. */
export class ApiMap {
  /** the entries of each prefix, in the order written (disjoint methods in a valid file) */
  private readonly byPrefix = new Map<string, CompiledApi[]>();
  /** segments of the saga paths that no API entry covers (`:param` matches any segment) */
  private readonly unmapped: readonly (readonly string[])[];

  /**
   * `unmapped`: saga paths that no API entry covers, so that their 404 can say why; it is only
   * read when a request already failed to match.
   */
  constructor(apis: readonly ApiSettings[], unmapped: readonly string[] = []) {
    this.unmapped = unmapped.map((p) => p.split('/').filter((s) => s !== ''));
    const grouped = new Map<string, ApiSettings[]>();
    for (const api of apis) {
      const prefix = normalise(api.path);
      const group = grouped.get(prefix);
      if (group) group.push(api);
      else grouped.set(prefix, [api]);
    }
    for (const [prefix, group] of grouped) {
      const union = new Set<string>();
      const compiled = group.map((api) => {
        if (api.methods === undefined) return { api, methods: undefined };
        const methods = new Set(api.methods.map((m) => m.toUpperCase()));
        if (methods.has('GET')) methods.add('HEAD');
        for (const m of methods) union.add(m);
        return { api, methods };
      });
      const any = compiled.some((c) => c.methods === undefined);
      const allow = any ? ROUTED_METHODS.filter((m) => m !== 'OPTIONS').join(', ') : [...union].join(', ');
      this.byPrefix.set(
        prefix,
        compiled.map(({ api, methods }) =>
          methods ? { settings: api, prefix, methods, allow } : { settings: api, prefix, allow },
        ),
      );
    }
  }

  /**
   * The API serving `segments` (the saga path split) for `method`, or undefined. The longest
   * configured prefix wins; among its entries, the one that allows the method (else its first
   * one, which does not: the caller answers 405 with the prefix's `allow`).
   */
  match(segments: readonly string[], method?: string): CompiledApi | undefined {
    if (this.byPrefix.size === 0) return undefined;
    // Prefixes from the shortest up; the longest one that is configured wins.
    let prefix = '';
    let found = this.byPrefix.get('/');
    for (const seg of segments) {
      prefix += '/' + seg;
      const group = this.byPrefix.get(prefix);
      if (group) found = group;
    }
    if (found === undefined) return undefined;
    if (method !== undefined && found.length > 1) {
      for (const api of found) if (ApiMap.allows(api, method)) return api;
    }
    return found[0];
  }

  /** The 404 detail for `segments`, which matched no API: says so when a saga has that path. */
  notFoundDetail(segments: readonly string[] | undefined): string {
    if (segments === undefined || this.unmapped.length === 0) return NO_API_DETAIL;
    const hit = this.unmapped.some(
      (pattern) =>
        pattern.length === segments.length && pattern.every((p, i) => p.startsWith(':') || p === segments[i]),
    );
    return hit ? UNMAPPED_SAGA_DETAIL : NO_API_DETAIL;
  }

  /** Whether `api` allows `method`. */
  static allows(api: CompiledApi, method: string): boolean {
    if (method === 'OPTIONS') return api.methods?.has('OPTIONS') ?? false;
    return api.methods === undefined || api.methods.has(method);
  }
}
