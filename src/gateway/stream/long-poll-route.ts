import { createHash } from 'node:crypto';
import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { LongPollSettings } from '../../config/settings.js';
import { DEFAULT_LONG_POLL } from '../../config/settings.js';
import { SagawayError } from '../../core/errors.js';
import type { GatewayContext } from '../context.js';
import { problemFor, sendProblem } from '../http/helpers/problem.js';
import { FIRST_OFFSET, LongPolls, type Answer, type LongPollScope, type Position } from './long-poll.js';
import type { StreamShared } from './member.js';

/**
 * The HTTP side of the long-poll form (`/api/stream/<path>?live=long-poll&offset=<token>`,
 * docs/streams.md#long-poll): reads the offset and cursor, admits the request like a stream
 * (maxPerClient, maxStreams), gets the answer of its position (long-poll.ts), holds a quiet one
 * until the feed's wait is over, and writes it with the headers a cache needs:
 * - `Stream-Next-Offset` (and `offset` in a batch's body), `Stream-Closed: true` on a finished feed;
 * - on a 204, `Stream-Cursor`: the client sends it back as `cursor`, so that the request after a
 *   204 is never the URL that answered it (a cached 204 would otherwise send every client back
 *   to itself until it expires: electric's cache loop). It is the moment the feed's wait ends
 *   (epoch ms), the same for every request the poll answers, and always above the request's own;
 * - `Cache-Control: public, max-age, stale-while-revalidate` where the answer is the same for
 *   everyone who may ask (a public API's `share: all` feed, or its anonymous callers under
 *   `share: caller`, then with `Vary: Authorization, Cookie`), else `private, no-store`; `ETag`.
 */

/** Query keys of the long-poll form, not the saga's INPUT. */
export const LONG_POLL_KEYS = ['live', 'offset', 'cursor', 'lastEventId', 'access_token'];

/** Whether a request asks for the long-poll form. */
export function isLongPoll(query: Record<string, unknown>): boolean {
  return query['live'] === 'long-poll';
}

/** A cursor: the decimal epoch-ms value the gateway gave (bounded: a client may send any text). */
const CURSOR = /^(?:0|[1-9][0-9]{0,14})$/;

/** Who may share an answer: everyone (`public`), anonymous callers (`anon`, varying by credential), nobody. */
export type Audience = 'public' | 'anon' | 'private';

/** What one long-poll request is about (route.ts works it out, as for the SSE form). */
export interface LongPollRequest {
  scope: LongPollScope;
  audience: Audience;
}

/** The long-poll handler of one gateway. */
export class LongPollRoute {
  private readonly polls: LongPolls;
  private readonly holds = new Set<() => void>();
  private readonly settings: LongPollSettings;

  constructor(
    private readonly ctx: GatewayContext,
    shared: StreamShared,
  ) {
    this.polls = new LongPolls(shared);
    this.settings = shared.settings.longPoll ?? DEFAULT_LONG_POLL;
    // closing the gateway answers the held requests at once and forgets every spot
    ctx.streams.add({ stop: () => this.stop() });
  }

  private stop(): void {
    this.polls.stop();
    for (const wake of [...this.holds]) wake();
  }

  /** Serve one request of the long-poll form. */
  async serve(request: FastifyRequest, reply: FastifyReply, lp: LongPollRequest): Promise<FastifyReply> {
    const { ctx } = this;
    const { scope } = lp;
    const query = request.query as Record<string, unknown>;
    const offset = query['offset'];
    const cursor = query['cursor'];
    if (cursor !== undefined && (typeof cursor !== 'string' || !CURSOR.test(cursor)))
      return invalid(request, reply, 'the cursor is not one this gateway gave');
    let at: Position = { skip: 0 };
    if (offset !== undefined && offset !== '' && offset !== FIRST_OFFSET) {
      if (typeof offset !== 'string') return invalid(request, reply, 'one offset, please');
      try {
        const p = ctx.cursors.decode(scope.path, scope.binding, offset);
        if (p.end) return this.write(request, reply, lp, finished(offset), 0);
        at = { ...(p.previous !== undefined ? { previous: p.previous } : {}), skip: p.index + 1 };
      } catch (err) {
        if (err instanceof SagawayError) return invalid(request, reply, 'the stream offset is not valid here');
        throw err;
      }
    }
    const refusal = ctx.streams.admit(scope.client);
    if (refusal) {
      ctx.metrics.reject(refusal);
      return sendProblem(reply, problemFor(refusal, request.id), {
        'retry-after': '5',
        ...PRIVATE,
      });
    }
    const arrived = Date.now();
    try {
      // A held request may be silent for as long as the hold: the idle timeout is for one-shot requests.
      request.raw.socket.setTimeout?.(0);
      const answer = await this.polls.answer(scope, at);
      if (answer.kind === 'quiet') await this.hold(request, Math.min(answer.until, arrived + this.settings.holdMs));
      return this.write(request, reply, lp, answer, cursor === undefined ? 0 : Number(cursor));
    } finally {
      ctx.streams.release(scope.client);
    }
  }

  /** Resolves at `until`, when the client goes, or when the gateway closes. */
  private hold(request: FastifyRequest, until: number): Promise<void> {
    const ms = until - Date.now();
    if (ms <= 0 || request.raw.destroyed) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        request.raw.off('close', wake);
        this.holds.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      request.raw.on('close', wake);
      this.holds.add(wake);
    });
  }

  /**
   * Write `answer` in one go: its headers are built once per answer and audience and shared by
   * every request that gets it (only the request's own ones, X-Request-Id and the like, are
   * added), and the response goes out as one `writeHead` + `end` of the prebuilt body, around
   * fastify's send (its onResponse hooks still count and log the request: they run on 'finish').
   */
  private write(
    request: FastifyRequest,
    reply: FastifyReply,
    lp: LongPollRequest,
    answer: Answer,
    cursor: number,
  ): FastifyReply {
    if (answer.kind === 'problem') return sendProblem(reply, answer.problem, PRIVATE);
    const { metrics } = this.ctx;
    metrics.memberPolls.inc();
    let head: { etag: string; headers: OutgoingHttpHeaders };
    let status: number;
    let body: Buffer | undefined;
    if (answer.kind === 'quiet') {
      // strictly above the request's own cursor: the next URL is never this one
      const next = Math.max(answer.until, cursor + 1);
      head =
        next === answer.until
          ? ((answer.heads ??= {})[lp.audience] ??= this.quietHead(answer.offset, next, lp.audience))
          : this.quietHead(answer.offset, next, lp.audience);
      status = request.headers['if-none-match'] === head.etag ? 304 : 204;
    } else {
      head = (answer.heads ??= {})[lp.audience] ??= this.batchHead(answer, lp.audience);
      if (request.headers['if-none-match'] === head.etag) status = 304;
      else {
        status = 200;
        body = answer.body;
        metrics.entriesWritten.inc(answer.entries);
      }
    }
    reply.hijack();
    const headers = Object.assign(reply.getHeaders() as OutgoingHttpHeaders, head.headers);
    if (body === undefined) {
      // a 204 or 304 has no body: no content headers
      delete headers['content-type'];
      delete headers['content-length'];
    }
    reply.raw.writeHead(status, headers);
    reply.raw.end(body);
    return reply;
  }

  private quietHead(offset: string, next: number, audience: Audience): { etag: string; headers: OutgoingHttpHeaders } {
    const etag = `"${createHash('sha256').update(`${offset}\n${next}`).digest('base64url').slice(0, 27)}"`;
    return {
      etag,
      headers: { ...this.cacheHeaders(audience), 'stream-next-offset': offset, 'stream-cursor': String(next), etag },
    };
  }

  private batchHead(
    answer: Extract<Answer, { kind: 'batch' }>,
    audience: Audience,
  ): { etag: string; headers: OutgoingHttpHeaders } {
    const headers: OutgoingHttpHeaders = {
      ...this.cacheHeaders(audience),
      'stream-next-offset': answer.offset,
      ...(answer.end ? { 'stream-closed': 'true' } : {}),
      etag: answer.etag,
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(answer.body.length),
    };
    return { etag: answer.etag, headers };
  }

  private cacheHeaders(audience: Audience): Record<string, string> {
    if (audience === 'private') return PRIVATE;
    const { maxAge, staleWhileRevalidate } = this.settings;
    const cc = `public, max-age=${maxAge}, stale-while-revalidate=${staleWhileRevalidate}`;
    return audience === 'anon' ? { 'cache-control': cc, vary: 'Authorization, Cookie' } : { 'cache-control': cc };
  }
}

/** The Cache-Control of every answer that is not for everyone, and of every problem. */
const PRIVATE = Object.freeze({ 'cache-control': 'private, no-store' });

/** 400 INVALID_CURSOR, never cached. */
function invalid(request: FastifyRequest, reply: FastifyReply, detail: string): FastifyReply {
  return sendProblem(reply, problemFor('INVALID_CURSOR', request.id, detail), PRIVATE);
}

/** The answer at a finished feed's final offset: nothing, and the feed says it ended. */
function finished(offset: string): Answer {
  const body = Buffer.from(`{"list":[],"offset":${JSON.stringify(offset)},"end":true}`);
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  return { kind: 'batch', body, etag, offset, end: true, entries: 0, until: Date.now() };
}
