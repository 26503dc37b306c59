/**
 * "Did you mean …?" for names a configuration gets wrong (issue 24 item 5): the closest of the
 * names that exist, when one is close enough to be a typo, and the list of them to choose from.
 */

/** Names listed at most; a longer list ends in "…". */
const MAX_LISTED = 20;

/** Edits (insert, delete, replace, swap two neighbours) between two words, case ignored. */
export function editDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  const d: number[][] = Array.from({ length: s.length + 1 }, (_, i) => [i, ...new Array<number>(t.length).fill(0)]);
  for (let j = 1; j <= t.length; j++) d[0]![j] = j;
  for (let i = 1; i <= s.length; i++) {
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1])
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[s.length]![t.length]!;
}

/** The candidate closest to `word`, when it is within a third of the word's length (at least 2 edits; names are short). */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  if (word.length > 200) return undefined; // the distance is quadratic: no guess for a long text
  let best: string | undefined;
  let distance = Infinity;
  for (const c of candidates) {
    if (c.length > 200) continue;
    const d = editDistance(word, c);
    if (d < distance) [best, distance] = [c, d];
  }
  return best !== undefined && distance <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}

/** `; did you mean "x"? <what>: a, b, c` (or `; no <what>` when there are none). */
export function suggestion(word: string, candidates: readonly string[], what: string): string {
  if (candidates.length === 0) return `; there are no ${what}`;
  const near = closest(word, candidates);
  const sorted = [...candidates].sort();
  const listed = sorted.slice(0, MAX_LISTED).join(', ') + (sorted.length > MAX_LISTED ? ', …' : '');
  return `${near !== undefined ? `; did you mean "${near}"?` : ''} ${what}: ${listed}`.replace(/^ /, '; ');
}
