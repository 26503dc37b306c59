import { createHash } from 'node:crypto';
import type { OutgoingHttpHeaders } from 'node:http';
import { DEFAULT_LONG_POLL } from '../../config/settings.js';
import { Cancel } from '../../core/cancel.js';
import type { Principal, SagaResult } from '../../core/types.js';
import { failureProblem } from '../request/outcome.js';
import { problemFor, type Problem } from '../http/helpers/problem.js';
import type { GroupScope } from './group-registry.js';
import type { StreamShared } from './member.js';
import { endToken, nextFits, positionToken, readPage } from './page.js';
import { runStreamPoll } from './poll-run.js';
import { canonicalJson, pollKey } from './share.js';
import { waitFor } from './wait.js';
import { entryData } from './writer.js';

/**
 * The long-poll form of a stream (`?live=long-poll&offset=`, docs/streams.md#long-poll): one
 * saga run answers every request at one position of a feed. A **spot** is a position (the
 * `previous` of the next poll and the entries of its batch already delivered) as polled once:
 * - a poll that gives entries after the position (or ends the feed) is a **batch**: one JSON body,
 *   encoded once, the answer of every request at that position until the feed's `wait` is over;
 * - a poll that gives nothing new is **quiet**: the requests at that position are held until the
 *   feed's `wait` is over (at most `longPoll.hold` each) and answered 204, so a feed of any
 *   number of clients costs one run per position per `wait`, as one SSE stream does;
 * - the position after a batch is polled once the feed's `wait` is over, not before: the
 *   requests that come for it meanwhile wait for that poll (up to `hold`) and get its answer;
 * - a failed poll answers the requests waiting for it and is forgotten.
 * Spots are shared by requests whose polls are the same run (share.ts, the same key as poll
 * groups); under `share: off` each request polls alone. Offsets only move forward: a batch's next
 * offset is after its last entry, never the offset it answered (a saga whose `next` repeats its
 * `previous` gets the position after the entries instead), so no cached answer points to itself.
 */

/** A position of a feed: the `previous` of its next poll and the entries of that batch already delivered. */
export interface Position {
  previous?: unknown;
  skip: number;
}

/** What a long-poll request gets. */
export type Answer =
  | {
      kind: 'batch';
      body: Buffer;
      etag: string;
      /** the next offset */
      offset: string;
      end: boolean;
      entries: number;
      /** until when it stands for later requests at the same position (the feed's wait; now for a partial batch) */
      until: number;
      /** the position of `offset`, which is not polled before `until` (the feed's wait, as in the SSE form) */
      next?: Position;
      /** its response headers per audience, built by the first request that writes it (long-poll-route.ts) */
      heads?: Heads;
    }
  | {
      kind: 'quiet';
      /** the offset to ask next: the request's own, or a later one when the saga moved its `next` */
      offset: string;
      /** when the feed's wait is over (epoch ms): requests are held until then, and it is their cursor */
      until: number;
      /** its response headers per audience for the cursor `until`, built once (long-poll-route.ts) */
      heads?: Heads;
    }
  | { kind: 'problem'; problem: Problem };

/** Response headers of one answer, per audience that asked (`etag` also kept apart, for If-None-Match). */
export type Heads = Partial<Record<'public' | 'anon' | 'private', { etag: string; headers: OutgoingHttpHeaders }>>;

/** A feed as one request polls it: the group scope, and who runs it. */
export interface LongPollScope extends GroupScope {
  requestId: string;
  principal: Principal;
  client: string;
}

interface Spot {
  readonly ready: Promise<Answer>;
  timer?: NodeJS.Timeout;
  /** a request came for it (a prepared poll runs only then: a feed nobody follows stops) */
  wanted?: boolean;
}

/**
 * The end of the feed's current `wait` on a clock shared by every position: the next multiple of
 * `wait` since the epoch. Polls of a feed then happen at the same instants whatever position
 * asked, so clients who joined at different moments (each position's chain polls when its wait
 * is over) reach the same saga `next` at the same tick and merge into one position, instead of
 * each chain polling in its own phase forever: one run per wait for the feed, not one per chain.
 * A chain's first wait is shorter than `wait` (up to the next tick), later ones `wait` less the
 * poll's own time.
 */
export function nextTick(wait: number, now = Date.now()): number {
  return wait > 0 ? Math.floor(now / wait) * wait + wait : now;
}

/** The offset of the first position (as Durable Streams spells it): no offset at all, or `-1`. */
export const FIRST_OFFSET = '-1';

/** The spots of one gateway, by the key of their poll. */
export class LongPolls {
  private readonly spots = new Map<string, Spot>();
  private readonly polls = new Set<Cancel>();
  private runs = 0;
  private stopped = false;
  private readonly sleeps = new Set<() => void>();
  private readonly holdMs: number;

  constructor(private readonly shared: StreamShared) {
    this.holdMs = shared.settings.longPoll?.holdMs ?? DEFAULT_LONG_POLL.holdMs;
  }

  /** Spots kept now (a test's view). */
  get size(): number {
    return this.spots.size;
  }

  /** The answer at `at` of `scope`'s feed: a spot's, polling it when no spot holds it. */
  answer(scope: LongPollScope, at: Position): Promise<Answer> {
    const key = scope.base === undefined ? undefined : pollKey(scope.base, at.previous) + '\n' + at.skip;
    const known = key === undefined ? undefined : this.spots.get(key);
    if (known) {
      known.wanted = true;
      return known.ready;
    }
    const ready = this.poll(scope, at);
    if (key !== undefined) this.register(key, scope, ready);
    return ready;
  }

  /** Keep the spot of `key` until its answer stands no more, and prepare the position after a batch. */
  private register(key: string, scope: LongPollScope, ready: Promise<Answer>, spot: Spot = { ready }): void {
    this.spots.set(key, spot);
    void ready.then((answer) => {
      // a batch or a quiet answer stands until the feed's wait is over; a failure is not kept
      this.keep(key, spot, answer);
      if (answer.kind !== 'batch' || answer.next === undefined || answer.until <= Date.now()) return;
      // The position after a batch is not polled before the wait is over either (one run per
      // wait, as a stream's group makes): its requests wait for the poll made then, and get its
      // batch at once; past `hold` (a long wait), they are answered 204 at `hold` instead.
      const after = pollKey(scope.base!, answer.next.previous) + '\n' + answer.next.skip;
      if (this.spots.has(after) || this.stopped) return;
      const quiet: Answer = { kind: 'quiet', offset: answer.offset, until: answer.until };
      if (answer.until - Date.now() > this.holdMs) return this.register(after, scope, Promise.resolve(quiet));
      const next = answer.next;
      // polled at `until` only when a request came for it meanwhile: a feed nobody follows stops
      const prepared: { spot?: Spot } = {};
      const ready = this.later(answer.until).then(() => {
        if (!this.stopped && prepared.spot?.wanted) return this.poll(scope, next);
        // Nobody asked, so nothing was polled: nothing may stand for this position. Kept until
        // `until`, this quiet answer would be served as if polled to a request that comes in
        // the moment between the timer and `until` (libuv counts a timer from the time its loop
        // turn began, so it fires early by however long that turn has run), a 204 for a feed
        // that has entries.
        this.drop(after, prepared.spot!);
        return quiet;
      });
      prepared.spot = { ready };
      this.register(after, scope, ready, prepared.spot);
    });
  }

  /** Resolves at `until`, or at once when the gateway closes. */
  private later(until: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.sleeps.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, until - Date.now());
      this.sleeps.add(wake);
    });
  }

  /** Keep `spot` until its answer's `until` (a failure: not at all). */
  private keep(key: string, spot: Spot, answer: Answer): void {
    const ms = answer.kind === 'problem' ? 0 : answer.until - Date.now();
    if (ms <= 0 || this.stopped) return this.drop(key, spot);
    spot.timer = setTimeout(() => this.drop(key, spot), ms);
    spot.timer.unref();
  }

  private drop(key: string, spot: Spot): void {
    if (spot.timer !== undefined) clearTimeout(spot.timer);
    if (this.spots.get(key) === spot) this.spots.delete(key);
  }

  /** The gateway closes: abort the polls in flight, forget every spot. */
  stop(): void {
    this.stopped = true;
    for (const wake of [...this.sleeps]) wake();
    for (const c of this.polls) c.abort();
    for (const [key, spot] of this.spots) this.drop(key, spot);
  }

  private async poll(scope: LongPollScope, at: Position): Promise<Answer> {
    const { settings, cursors, log, metrics, maxResponse } = this.shared;
    const { path, binding } = scope;
    const result = await this.run(scope, at.previous);
    if (result.outcome === 'FAIL' || result.outcome === 'TIMEOUT')
      return { kind: 'problem', problem: failureProblem(result, scope.requestId) };
    const page = readPage(result.response);
    const { list } = page;
    const end = Math.min(list.length, at.skip + settings.maxEntries);
    const wait = waitFor(page.wait, settings, (value) =>
      log.warn({ requestId: scope.requestId, wait: String(value).slice(0, 64) }, 'invalid stream wait ignored'),
    );
    const moved = page.next !== undefined && canonicalJson(page.next) !== canonicalJson(at.previous);
    if (moved && !nextFits(page.next)) {
      const detail = 'the saga answered a next longer than 4 KB as JSON';
      return { kind: 'problem', problem: problemFor('STREAM_NEXT_TOO_LARGE', scope.requestId, detail) };
    }
    if (end <= at.skip && page.continue) {
      // nothing new: the position stays (or moves with the saga's `next`, never back)
      const offset = moved
        ? positionToken(cursors, path, binding, { previous: page.next, skip: 0 })
        : positionToken(cursors, path, binding, at);
      return { kind: 'quiet', offset, until: nextTick(wait) };
    }
    const partial = end < list.length;
    const final = !page.continue && !partial;
    // a `next` that does not move: the position after these entries, never this one again
    const next: Position | undefined = final
      ? undefined
      : partial || !moved
        ? { previous: at.previous, skip: end }
        : { previous: page.next, skip: 0 };
    const offset = next ? positionToken(cursors, path, binding, next) : endToken(cursors, path, binding, at.previous);
    let text = '{"list":[';
    for (let i = at.skip; i < end; i++) {
      if (i > at.skip) text += ',';
      text += entryData(list[i]);
      if (text.length > maxResponse) break;
    }
    text += `],"offset":${JSON.stringify(offset)},"end":${final}}`;
    const body = Buffer.from(text, 'utf8');
    if (body.length > maxResponse) {
      log.warn({ requestId: scope.requestId }, 'long-poll batch over gateway.limits.maxResponse');
      const detail = 'a poll of this stream is larger than gateway.limits.maxResponse';
      return { kind: 'problem', problem: problemFor('RESPONSE_TOO_LARGE', scope.requestId, detail) };
    }
    metrics.entriesEncoded.inc(end - at.skip);
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
    const until = partial ? Date.now() : nextTick(wait);
    return {
      kind: 'batch',
      body,
      etag,
      offset,
      end: final,
      entries: end - at.skip,
      until,
      ...(next && !partial ? { next } : {}),
    };
  }

  private async run(scope: LongPollScope, previous: unknown): Promise<SagaResult> {
    const cancel = new Cancel();
    this.polls.add(cancel);
    try {
      return await runStreamPoll(this.shared, scope, scope, previous, `${scope.requestId}.${++this.runs}`, cancel);
    } finally {
      this.polls.delete(cancel);
    }
  }
}
