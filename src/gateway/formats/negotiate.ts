import type { Format } from '../apis/saga-path.js';

/**
 * Format negotiation of the one-shot form (DESIGN §8): the path extension wins, else the best
 * `Accept` range we can serve (by q, then by our order json, xml, html, csv, text), else JSON.
 * `null` means nothing acceptable (406). Results are memoised per Accept value, since clients
 * send a handful of distinct values.
 */

const MEDIA: ReadonlyArray<[string, Format]> = [
  ['application/json', 'json'],
  ['application/xml', 'xml'],
  ['text/html', 'html'],
  ['text/csv', 'csv'],
  ['text/plain', 'text'],
];
const ALIASES: Readonly<Record<string, Format>> = {
  'text/xml': 'xml',
  'application/xhtml+xml': 'html',
  'application/problem+json': 'json',
};

const cache = new Map<string, Format | null>();
const CACHE_MAX = 256;

function matches(range: string, media: string): boolean {
  if (range === '*/*' || range === media) return true;
  return range.endsWith('/*') && media.startsWith(range.slice(0, -1));
}

/** The format for an Accept header value (undefined or empty = JSON). */
export function formatForAccept(accept: string | undefined): Format | null {
  if (accept === undefined || accept.trim() === '') return 'json';
  const hit = cache.get(accept);
  if (hit !== undefined) return hit;
  let best: Format | null = null;
  let bestQ = 0;
  let bestRank = Infinity;
  for (const part of accept.slice(0, 1024).split(',')) {
    const [rawRange, ...params] = part.split(';');
    const range = (rawRange ?? '').trim().toLowerCase();
    let q = 1;
    for (const p of params) {
      const [k, v] = p.split('=');
      if (k?.trim() === 'q') q = Number(v);
    }
    if (!(q > 0) || q > 1) continue;
    const alias = ALIASES[range];
    MEDIA.forEach(([media, format], rank) => {
      if (!(alias === format || matches(range, media))) return;
      if (q > bestQ || (q === bestQ && rank < bestRank)) {
        best = format;
        bestQ = q;
        bestRank = rank;
      }
    });
  }
  if (cache.size >= CACHE_MAX) cache.clear();
  cache.set(accept, best);
  return best;
}

/** The response format: the extension when present, else by Accept. */
export function negotiate(extension: Format | undefined, accept: string | undefined): Format | null {
  return extension ?? formatForAccept(accept);
}
