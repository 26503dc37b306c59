import { isObject } from '../../core/path.js';
import { MAX_NEXT_JSON, type CursorCodec } from './cursor.js';
import { formatEvent } from './writer.js';

/**
 * The stream protocol (DESIGN §7): what a stream saga answers to one poll, read from its
 * response once and typed, and the token that ends a stream. The poll loop (group.ts) reads a
 * page only through here.
 */

/** A stream saga's answer to one poll. */
export interface StreamPage {
  /** the entries, one event each (a response without a `list` array has none) */
  readonly list: readonly unknown[];
  /** `continue: true`: poll again after `wait`; anything else ends the stream after this page */
  readonly continue: boolean;
  /** the `previous` of the next poll; undefined (absent or null): the same `previous` again */
  readonly next: unknown;
  /** the pause before the next poll as the saga wrote it (wait.ts parses it); undefined: the default */
  readonly wait: unknown;
}

/** The page of a saga's response (any value: a response that is not an object is an empty, final page). */
export function readPage(response: unknown): StreamPage {
  const r: Record<string, unknown> = isObject(response) ? response : {};
  const list = r['list'];
  return {
    list: Array.isArray(list) ? (list as unknown[]) : [],
    continue: r['continue'] === true,
    next: r['next'] ?? undefined,
    wait: r['wait'],
  };
}

/** Whether a `next` is short enough to travel in every token of the next batch (cursor.ts MAX_NEXT_JSON). */
export function nextFits(next: unknown): boolean {
  return (JSON.stringify(next)?.length ?? 0) <= MAX_NEXT_JSON;
}

/**
 * The final token of a stream whose last batch `previous` produced (on `path`, for `binding`):
 * the id of `event: end`, and of an `event: error` that must not be retried (member.ts
 * sendError), so that a reconnect presenting it is answered 204 and the client stops.
 */
export function endToken(cursors: CursorCodec, path: string, binding: string, previous: unknown): string {
  return cursors.batch(path, binding, previous).end();
}

/**
 * The token of a position: the start token of the batch `previous` makes when none of its
 * entries were delivered (also for the first batch), else the token of the last delivered entry. A long-poll offset (long-poll.ts), and the id of a lifetime close
 * (member.ts): the SSE form resumes from any of them.
 */
export function positionToken(
  cursors: CursorCodec,
  path: string,
  binding: string,
  at: { previous?: unknown; skip: number },
): string {
  const batch = cursors.batch(path, binding, at.previous, Math.max(1, at.skip));
  return at.skip === 0 ? batch.start() : batch.entry(at.skip - 1);
}

/** endToken, computed at most once and only when asked for (most errors are retryable: no token). */
export function lazyEndToken(cursors: CursorCodec, path: string, binding: string, previous: unknown): () => string {
  let end: string | undefined;
  return () => (end ??= endToken(cursors, path, binding, previous));
}

/** The `event: end` that closes a finished stream, with its final token. */
export function endEvent(token: string): string {
  return formatEvent({ event: 'end', id: token, data: '{"reason":"complete"}' });
}
