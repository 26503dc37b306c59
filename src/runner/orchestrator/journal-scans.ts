import { SagawayError } from '../../core/errors.js';
import type { State, StateRecord } from '../../states/state.js';
import { INDEX_STATUS } from './correlation-index.js';

/**
 * The saga journal's passes over many records of one runner (journal.ts): the orphan scan, which
 * takes over the runs of processes that are gone, and retention, which deletes finished runs.
 * Both read pages in insertion order through the journal's one index.
 */

/** The data fields the orphan scan and pruning filter on (the journal's one index). */
const INDEXED_FIELDS = ['status', 'runner', 'deployment'] as const;

/** Finished records removed per pruning pass at most (10 pages of 100). */
export const PRUNE_PAGES = 10;

/** The orphan scan and retention of one runner's journal. */
export class JournalScans {
  /** the index of the orphan scan and of pruning, created once (ensureIndexed) */
  private indexed: Promise<void> | undefined;

  constructor(
    private readonly state: State,
    private readonly runner: string,
    private readonly deployment: string,
    private readonly instance: string,
  ) {}

  /**
   * The orphan scan and pruning filter on status, runner and deployment in insertion order: an
   * index on exactly that (SQL journals), so that neither reads the whole table. Retried on the
   * next call when it failed (store down at start).
   */
  private ensureIndexed(): Promise<void> {
    this.indexed ??= (this.state.ensureIndex?.(INDEXED_FIELDS) ?? Promise.resolve()).catch((err: unknown) => {
      this.indexed = undefined;
      throw err;
    });
    return this.indexed;
  }

  /**
   * Retention (`runners.R.journalRetention`): delete this runner's finished runs whose last write
   * is older than `retentionMs`, and correlation index entries as old. Bounded: each kind is
   * read in insertion order, a page of 100 at a time through the index, at most PRUNE_PAGES pages
   * per call, and a page with nothing old ends it (what follows is younger). A record written
   * since it was read (a stream's next poll reusing a finished record) is kept: deletes name
   * its version. RUNNING records are never pruned (they are resumed). Returns how many went.
   */
  async prune(retentionMs: number, now = Date.now()): Promise<number> {
    await this.ensureIndexed();
    const before = now - retentionMs;
    let removed = 0;
    for (const [status, field] of [
      ['DONE', 'updatedAt'],
      [INDEX_STATUS, 'startedAt'],
    ] as const) {
      let after: string | undefined;
      for (let page = 0; page < PRUNE_PAGES; page++) {
        const list = await this.state.list({
          filter: { status, runner: this.runner, deployment: this.deployment },
          limit: 100,
          ...(after ? { after } : {}),
        });
        const old = list.list.filter((r) => typeof r.data[field] === 'number' && (r.data[field] as number) < before);
        const results = await Promise.allSettled(
          old.map((r) => this.state.delete(r.id, { expectedVersion: r.version })),
        );
        removed += results.filter((x) => x.status === 'fulfilled').length;
        if (old.length === 0 || !list.next) break;
        after = list.next;
      }
    }
    return removed;
  }

  /**
   * Runs of this runner and deployment that are RUNNING while their owner is gone, claimed for
   * this process (compare-and-set on the record version, so two survivors never both take one);
   * each as written, with `claimedFrom`: its owner before (not stored).
   */
  async claimOrphans(isLive: (instance: string) => boolean, limit = 100): Promise<StateRecord[]> {
    await this.ensureIndexed();
    const claimed: StateRecord[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await this.state.list({
        filter: { status: 'RUNNING', runner: this.runner, deployment: this.deployment },
        limit: 100,
        ...(after ? { after } : {}),
      });
      for (const rec of page.list) {
        const owner = rec.data['owner'];
        if (typeof owner !== 'string' || isLive(owner)) continue;
        try {
          const taken = await this.state.update(
            rec.id,
            { owner: this.instance, updatedAt: Date.now() },
            { expectedVersion: rec.version },
          );
          // whom it was taken from (not stored): resume.ts names a redrive's trace by it
          claimed.push({ ...taken, data: { ...taken.data, claimedFrom: owner } });
        } catch (err) {
          if (!(err instanceof SagawayError && (err.code === 'STALE_VERSION' || err.code === 'RECORD_NOT_FOUND')))
            throw err;
        }
        if (claimed.length >= limit) return claimed;
      }
      if (!page.next) return claimed;
      after = page.next;
    }
  }
}
