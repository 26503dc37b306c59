import type { ErrorCode } from '../core/errors.js';
import type { ApiSettings } from './settings.js';

/**
 * Entries of `gateway.apis` on one path (issue 19, item 5). Several may share a path when their
 * `methods` are disjoint, each with its own `public`/`roles` (GET public, POST for editors); two
 * that both serve a method are a load error: which one's auth applies would otherwise be decided
 * by their order, silently (before, the second entry was ignored).
 */

/** The stable code of the load error, at the start of its message (docs/errors.md). */
export const API_METHODS_OVERLAP: ErrorCode = 'API_METHODS_OVERLAP';

/** A path as the API mapping keys it: `/` or `/a/b`. */
function normalised(path: string): string {
  return (
    '/' +
    path
      .split('/')
      .filter((s) => s !== '')
      .join('/')
  );
}

/** The methods both entries serve (HEAD goes with GET; no `methods` = any). */
function shared(a: readonly string[] | undefined, b: readonly string[] | undefined): string[] {
  if (a === undefined && b === undefined) return ['every method'];
  const widen = (ms: readonly string[]) => {
    const set = new Set(ms.map((m) => m.toUpperCase()));
    if (set.has('GET')) set.add('HEAD');
    return set;
  };
  if (a === undefined || b === undefined) return [...widen((a ?? b)!)];
  const other = widen(b);
  return [...widen(a)].filter((m) => other.has(m));
}

/** Each entry that overlaps an earlier one on its path: [its index, the message]. */
export function apiOverlaps(apis: readonly ApiSettings[]): [number, string][] {
  const out: [number, string][] = [];
  apis.forEach((api, j) => {
    for (let i = 0; i < j; i++) {
      const earlier = apis[i]!;
      if (normalised(earlier.path) !== normalised(api.path)) continue;
      const both = shared(earlier.methods, api.methods);
      if (both.length === 0) continue;
      out.push([
        j,
        `${API_METHODS_OVERLAP}: gateway.apis[${i}] already serves ${both.join(', ')} on ${normalised(api.path)}; ` +
          'entries on one path need disjoint `methods` (each method then has its own public/roles)',
      ]);
      return;
    }
  });
  return out;
}
