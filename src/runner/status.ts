import type { StatusSource } from '../core/messages.js';

/**
 * The first source that knows the run, in order: the journals first (a journaled runner writes
 * no bucket, and a journal can resume a run), then the outcome buckets. A source that fails
 * fails the lookup (503), rather than answering 404 for a run it may hold.
 */
export function firstStatus(sources: readonly (StatusSource | undefined)[]): StatusSource {
  const list = sources.filter((s): s is StatusSource => s !== undefined);
  // Only journals list their runs (an outcome bucket is read by key alone).
  const listing = list.find((s) => s.recent !== undefined);
  return {
    ...(listing?.recent ? { recent: (limit: number) => listing.recent!(limit) } : {}),
    async lookup(scope, id, options) {
      for (const source of list) {
        const found = await source.lookup(scope, id, options);
        if (found) return found;
      }
      return undefined;
    },
  };
}
