import type { ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import type { StreamSettings } from '../../config/settings.js';
import { ERROR_CODES, isKnownCode } from '../../core/errors.js';
import type { Principal } from '../../core/types.js';
import type { SagaService } from '../../core/messages.js';
import type { CursorCodec } from './cursor.js';
import type { GatewayMetrics } from '../http/helpers/metrics.js';
import type { Problem } from '../http/helpers/problem.js';
import type { StreamRegistry } from './limits.js';
import { formatComment, formatEvent } from './writer.js';

/**
 * One client's SSE connection (DESIGN §7): its socket, heartbeat, backpressure and errors. The
 * polling is done by the poll group it belongs to (group.ts), alone or shared with other
 * streams. Invariants kept here:
 * - no more than `maxBuffered` bytes queued by `send`; a socket that stays full for
 *   `stallTimeout` is closed (the client resumes with its cursor, losing nothing). The clock
 *   starts when a write leaves the socket full, not when the next poll wants to write: a saga
 *   that waits long between polls must not keep a stalled socket open for its wait (issue 19,
 *   item 6). The heartbeat checks it, so the cut comes within `stallTimeout` + one `heartbeat`;
 * - no ping into a full socket;
 * - `stop()` (which the socket's close calls) clears every timer of the member and leaves the
 *   group, which stops its own loop when it has no member left.
 */

/** Reconnection delay suggested to clients after a retryable `event: error`. */
export const ERROR_RETRY_MS = 5000;

function isRetryable(code: string): boolean {
  return isKnownCode(code) && ERROR_CODES[code].retryable;
}

/** What every stream of one gateway shares. */
export interface StreamShared {
  settings: StreamSettings;
  timeoutMs: number;
  /** `gateway.limits.maxResponse`: the most one poll may send */
  maxResponse: number;
  service: SagaService;
  cursors: CursorCodec;
  registry: StreamRegistry;
  metrics: GatewayMetrics;
  log: FastifyBaseLogger;
}

/** One client's own parameters. */
export interface MemberSpec {
  requestId: string;
  principal: Principal;
  /** admission key of the caller */
  client: string;
  /** re-authenticates before a poll; false ends this stream with UNAUTHORIZED (undefined: nothing to check) */
  recheck?: () => Promise<boolean>;
}

/** What a member's group must know when the member goes. */
export interface MemberHolder {
  leave(member: StreamMember): void;
  /** the member's `maxLifetime` is over: close it at its position, now or after the batch being written */
  expire(member: StreamMember): void;
}

/** The reconnection delay a lifetime close suggests: soon, the stream is healthy. */
export const LIFETIME_RETRY_MS = 500;

/** A client's open stream. */
export class StreamMember {
  private closed = false;
  private heartbeat: NodeJS.Timeout;
  private lifetime?: NodeJS.Timeout;
  private stall?: NodeJS.Timeout;
  /** when a write left the socket full (epoch ms); undefined while it takes data */
  private fullSince: number | undefined;
  private wake?: () => void;
  /** the poll group serving this stream */
  group?: MemberHolder;
  /** auth was just checked (on connect, or before the poll it was detached from): the next poll skips the recheck */
  fresh = true;

  constructor(
    private readonly shared: StreamShared,
    readonly spec: MemberSpec,
    readonly res: ServerResponse,
  ) {
    this.heartbeat = setTimeout(this.ping, shared.settings.heartbeatMs);
    shared.metrics.streamTimers++;
    const life = shared.settings.maxLifetimeMs ?? 0;
    if (life > 0) {
      this.lifetime = setTimeout(() => {
        this.lifetime = undefined;
        shared.metrics.streamTimers--;
        if (!this.closed) this.group?.expire(this);
      }, life);
      shared.metrics.streamTimers++;
    }
    shared.registry.add(this);
    shared.metrics.activeStreams++;
    res.on('close', this.stop);
  }

  /** whether the stream ended */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Bytes that the member can still take before `maxBuffered`. */
  get room(): number {
    return this.shared.settings.maxBuffered - this.res.writableLength;
  }

  /** Stop now: clear timers, release the slot, leave the group, end the response. Idempotent. */
  readonly stop = (): void => {
    if (this.closed) return;
    this.closed = true;
    const { registry, metrics } = this.shared;
    clearTimeout(this.heartbeat);
    metrics.streamTimers--;
    if (this.lifetime !== undefined) {
      clearTimeout(this.lifetime);
      this.lifetime = undefined;
      metrics.streamTimers--;
    }
    this.wake?.();
    registry.release(this.spec.client, this);
    metrics.activeStreams--;
    this.group?.leave(this);
    if (!this.res.writableEnded && !this.res.destroyed) this.res.end();
  };

  /**
   * Write a poll's events without queueing more than `maxBuffered` bytes for the socket (at least
   * one event per write, so a larger event still goes out alone). Once the socket stops taking
   * data, waits for it to drain; a socket that stays full for `stallTimeout` is closed, and the
   * client resumes after the last event it received. False when the stream closed.
   */
  async send(events: string[]): Promise<boolean> {
    const max = this.shared.settings.maxBuffered;
    let i = 0;
    while (i < events.length) {
      if (this.res.writableNeedDrain && !(await this.drained())) return false;
      if (this.closed) return false;
      const room = max - this.res.writableLength;
      let chunk = events[i++]!;
      let n = 1;
      // One write per chunk: one syscall for many small events instead of one per event.
      while (i < events.length && chunk.length + events[i]!.length <= room) {
        chunk += events[i++]!;
        n++;
      }
      this.write(chunk, n, Buffer.byteLength(chunk));
    }
    return !this.closed;
  }

  /** Write `chunk` (`bytes` long) holding `events` events (0 for a comment); nothing for an empty chunk. */
  write(chunk: string | Buffer, events: number, bytes: number): void {
    if (this.closed || bytes === 0) return;
    const { metrics } = this.shared;
    this.res.write(chunk);
    if (this.fullSince === undefined && this.res.writableNeedDrain) {
      this.fullSince = Date.now();
      this.res.once('drain', this.emptied);
    }
    this.heartbeat.refresh();
    metrics.bytes.inc(bytes);
    metrics.events.inc(events);
  }

  /**
   * `event: error` with the problem. Browsers reconnect by themselves after any close, so the
   * event also says what that reconnect should do: for a retryable code it carries no id (the
   * reconnect resumes after the last entry) and `retry` slows the reconnect down; otherwise its
   * id is the final token (`endToken`), so the reconnect gets 204 and the EventSource stops
   * instead of hammering a saga that will fail again.
   */
  sendError(problem: Problem, endToken: () => string): void {
    const data = JSON.stringify(problem);
    const text = isRetryable(problem.code)
      ? formatEvent({ event: 'error', retry: ERROR_RETRY_MS, data })
      : formatEvent({ event: 'error', id: endToken(), data });
    this.write(text, 1, Buffer.byteLength(text));
  }

  /**
   * The end of `maxLifetime`: an event without data (not dispatched, but it sets the client's last
   * event id to `token`, the stream's position) and `retry`, then the end of the response. The
   * browser reconnects after `retry` with that id and resumes where it was, through whatever
   * cache or fan-out layer collapses new requests.
   */
  closeForLifetime(token: string): void {
    const text = formatEvent({ id: token, retry: LIFETIME_RETRY_MS, data: '' }).replace('data: \n', '');
    this.write(text, 0, Buffer.byteLength(text));
    this.shared.metrics.lifetimeCloses.inc();
    this.stop();
  }

  private readonly emptied = (): void => {
    this.fullSince = undefined;
  };

  private readonly ping = (): void => {
    if (this.closed) return;
    // A full socket gets no ping: it would only grow the buffer. One full for `stallTimeout`
    // is closed here, whether or not a poll is waiting for it to drain.
    if (!this.res.writableNeedDrain) {
      const text = formatComment('ping');
      this.write(text, 0, text.length);
    } else if (this.fullSince !== undefined && Date.now() - this.fullSince >= this.shared.settings.stallTimeoutMs) {
      this.closeStalled();
      return;
    }
    this.heartbeat.refresh();
  };

  private closeStalled(): void {
    this.shared.log.info({ requestId: this.spec.requestId }, 'stream stalled; closing');
    this.res.destroy();
    // destroy() emits 'close' on a later tick; the member is over now.
    this.stop();
  }

  /** Resolves true once the socket has drained, false when it closed or stalled for `stallTimeout` (then it is closed). */
  drained(): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    if (!this.res.writableNeedDrain) return Promise.resolve(true);
    const { metrics, settings } = this.shared;
    return new Promise<boolean>((resolve) => {
      const done = (ok: boolean): void => {
        this.res.off('drain', onDrain);
        if (this.stall !== undefined) {
          clearTimeout(this.stall);
          this.stall = undefined;
          metrics.streamTimers--;
        }
        this.wake = undefined;
        resolve(ok && !this.closed);
      };
      const onDrain = (): void => done(true);
      this.wake = () => done(false);
      this.res.on('drain', onDrain);
      // Counted from when the socket filled up, which may be long before this wait began.
      const full = Date.now() - (this.fullSince ?? Date.now());
      this.stall = setTimeout(
        () => {
          done(false);
          this.closeStalled();
        },
        Math.max(0, settings.stallTimeoutMs - full),
      );
      metrics.streamTimers++;
    });
  }
}
