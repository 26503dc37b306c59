import type { ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import type { StreamSettings } from '../../config/settings.js';
import { Cancel } from '../../core/cancel.js';
import { ERROR_CODES, isKnownCode, toErrorInfo } from '../../core/errors.js';
import { isObject } from '../../core/path.js';
import type { Principal, SagaRequest, SagaResult } from '../../core/types.js';
import type { SagaService } from '../../core/messages.js';
import { MAX_NEXT_JSON, type CursorCodec, type CursorPosition } from './cursor.js';
import type { GatewayMetrics } from '../http/metrics.js';
import { failureProblem } from '../request/outcome.js';
import { problemFor, type Problem } from '../http/problem.js';
import type { StreamRegistry } from './limits.js';
import { waitFor } from './wait.js';
import { entryData, formatComment, formatEvent } from './writer.js';

/**
 * The SSE loop of one stream (DESIGN §7): run the saga, send each `list` entry as an event whose
 * id is a cursor token, then either end (`continue` is not true) or wait and run again with
 * `previous` = the last `next`. Invariants:
 * - at most one saga run in flight; its signal is aborted the moment the client goes away;
 * - no poll while the socket has unsent data (backpressure), and no more than `maxBuffered`
 *   bytes queued for it: a poll's events wait for the socket to drain; a socket that stays full
 *   for `stallTimeout` is closed (the client resumes with its cursor, losing nothing);
 * - one poll's events are at most `gateway.limits.maxResponse` bytes (else RESPONSE_TOO_LARGE);
 * - every timer is cleared in `stop()`, which the socket's close calls, so nothing outlives the
 *   connection by more than the run in flight (and that run is aborted).
 */

/** Reconnection delay suggested to clients after a retryable `event: error`. */
export const ERROR_RETRY_MS = 5000;

function isRetryable(code: string): boolean {
  return isKnownCode(code) && ERROR_CODES[code].retryable;
}

/** What every loop of one gateway shares. */
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

/** One stream's parameters. */
export interface StreamSpec {
  runner: string;
  method: string;
  /** saga path (also what cursors are bound to) */
  path: string;
  input: Record<string, unknown>;
  query: Record<string, unknown>;
  requestId: string;
  principal: Principal;
  /** cursor binding of the caller */
  caller: string;
  /** admission key of the caller */
  client: string;
  /** where to resume, when the client presented a cursor */
  start?: CursorPosition;
  /** re-authenticates before every poll after the first; false ends the stream with UNAUTHORIZED */
  recheck: () => Promise<boolean>;
}

/** A running stream. */
export class StreamLoop {
  private closed = false;
  private poll?: Cancel;
  /** saga runs made by this stream so far (each poll is a run with its own id) */
  private runs = 0;
  private heartbeat: NodeJS.Timeout;
  private timer?: NodeJS.Timeout;
  private wake?: () => void;

  constructor(
    private readonly shared: StreamShared,
    private readonly spec: StreamSpec,
    private readonly res: ServerResponse,
  ) {
    this.heartbeat = setTimeout(this.ping, shared.settings.heartbeatMs);
    shared.metrics.streamTimers++;
    shared.registry.add(this);
    shared.metrics.activeStreams++;
    res.on('close', this.stop);
  }

  /** Stop now: abort the run in flight, clear timers, release the slot, end the response. Idempotent. */
  readonly stop = (): void => {
    if (this.closed) return;
    this.closed = true;
    const { registry, metrics } = this.shared;
    clearTimeout(this.heartbeat);
    metrics.streamTimers--;
    this.disarm();
    this.poll?.abort();
    this.wake?.();
    registry.release(this.spec.client, this);
    metrics.activeStreams--;
    if (!this.res.writableEnded) this.res.end();
  };

  /** Run the loop until the stream ends or the client goes away. */
  async run(): Promise<void> {
    const { settings, cursors } = this.shared;
    const { path, caller } = this.spec;
    let previous = this.spec.start?.previous;
    let skip = this.spec.start ? this.spec.start.index + 1 : 0;
    let first = true;
    try {
      while (!this.closed) {
        if (!first && !(await this.spec.recheck())) {
          if (!this.closed) this.sendError(problemFor('UNAUTHORIZED', this.spec.requestId), previous);
          break;
        }
        first = false;
        if (!(await this.drained())) break;
        const result = await this.runSaga(previous);
        if (this.closed) break;
        if (result.outcome === 'FAIL' || result.outcome === 'TIMEOUT') {
          this.sendError(failureProblem(result, this.spec.requestId), previous);
          break;
        }
        const response = isObject(result.response) ? result.response : {};
        const list = Array.isArray(response['list']) ? (response['list'] as unknown[]) : [];
        const end = Math.min(list.length, skip + settings.maxEntries);
        const tokens = cursors.batch(path, caller, previous, end);
        const events = this.format(list, skip, end, (i) => tokens.entry(i));
        if (events === undefined) {
          this.shared.log.warn({ requestId: this.spec.requestId }, 'stream poll over gateway.limits.maxResponse');
          const detail = 'a poll of this stream is larger than gateway.limits.maxResponse';
          this.sendError(problemFor('RESPONSE_TOO_LARGE', this.spec.requestId, detail), previous);
          break;
        }
        if (end < list.length) {
          if (!(await this.send(events))) break;
          // An oversized batch: the rest comes from re-running the same `previous` (as a resume would).
          skip = end;
          continue;
        }
        skip = 0;
        if (response['continue'] !== true) {
          events.push(formatEvent({ event: 'end', id: tokens.end(), data: '{"reason":"complete"}' }));
          await this.send(events);
          break;
        }
        if (!(await this.send(events))) break;
        const next = response['next'];
        if (next !== undefined && next !== null) {
          if ((JSON.stringify(next)?.length ?? 0) > MAX_NEXT_JSON) {
            const detail = 'the saga answered a next longer than 4 KB as JSON';
            this.sendError(problemFor('STREAM_NEXT_TOO_LARGE', this.spec.requestId, detail), previous);
            break;
          }
          previous = next;
        }
        const ms = waitFor(response['wait'], settings, (value) =>
          this.shared.log.warn(
            { requestId: this.spec.requestId, wait: String(value).slice(0, 64) },
            'invalid stream wait ignored',
          ),
        );
        await this.sleep(ms);
      }
    } catch (err) {
      this.shared.log.error({ err, requestId: this.spec.requestId }, 'stream loop failed');
      if (!this.closed) this.sendError(problemFor('INTERNAL', this.spec.requestId), previous);
    } finally {
      this.stop();
    }
  }

  private async runSaga(previous: unknown): Promise<SagaResult> {
    const { service, metrics, timeoutMs } = this.shared;
    const spec = this.spec;
    const poll = new Cancel();
    this.poll = poll;
    const input = previous === undefined ? spec.input : { ...spec.input, previous };
    const req: SagaRequest = {
      method: spec.method,
      path: spec.path,
      input,
      query: spec.query,
      requestId: spec.requestId,
      // every poll is a run of its own: its keys must not collide with the previous poll's
      runId: `${spec.requestId}.${++this.runs}`,
      user: spec.principal,
      caller: spec.client,
      deadline: Date.now() + timeoutMs,
      cancel: poll,
      get signal(): AbortSignal {
        return poll.signal;
      },
    };
    metrics.polls.inc();
    metrics.streamRuns++;
    try {
      return await service.run(spec.runner, req);
    } catch (err) {
      return { outcome: 'FAIL', http: 500, error: toErrorInfo(err) };
    } finally {
      metrics.streamRuns--;
      if (this.poll === poll) this.poll = undefined;
    }
  }

  /**
   * The events of entries `from..end-1` of a poll, or undefined when they pass
   * `gateway.limits.maxResponse` (formatting stops there: an oversized poll costs at most the
   * budget in text).
   */
  private format(list: unknown[], from: number, end: number, id: (i: number) => string): string[] | undefined {
    const max = this.shared.maxResponse;
    const events: string[] = [];
    let units = 0;
    for (let i = from; i < end; i++) {
      const event = formatEvent({ id: id(i), data: entryData(list[i]) });
      units += event.length;
      // UTF-16 code units never exceed UTF-8 bytes: past the budget in units is past it in bytes
      if (units > max) return undefined;
      events.push(event);
    }
    if (units * 3 > max) {
      let bytes = 0;
      for (const event of events) bytes += Buffer.byteLength(event, 'utf8');
      if (bytes > max) return undefined;
    }
    return events;
  }

  /**
   * Write a poll's events without queueing more than `maxBuffered` bytes for the socket (at least
   * one event per write, so a larger event still goes out alone). Once the socket stops taking
   * data, waits for it to drain as before a poll (no poll meanwhile); a socket that stays full
   * for `stallTimeout` is closed, and the client resumes after the last event it received, so a
   * client that does not read holds at most `maxBuffered` bytes here and loses nothing. False
   * when the stream closed.
   */
  private async send(events: string[]): Promise<boolean> {
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
      this.write(chunk, n);
    }
    return !this.closed;
  }

  /** Write `chunk` holding `events` events (0 for a comment); nothing for an empty chunk. */
  private write(chunk: string, events: number): void {
    if (this.closed || chunk === '') return;
    const { metrics } = this.shared;
    this.res.write(chunk);
    this.heartbeat.refresh();
    metrics.bytes.inc(Buffer.byteLength(chunk));
    metrics.events.inc(events);
  }

  private endToken(previous: unknown): string {
    return this.shared.cursors.batch(this.spec.path, this.spec.caller, previous).end();
  }

  /**
   * `event: error` with the problem. Browsers reconnect by themselves after any close, so the
   * event also says what that reconnect should do: for a retryable code it carries no id (the
   * reconnect resumes after the last entry) and `retry` slows the reconnect down; otherwise its
   * id is the final token, so the reconnect gets 204 and the EventSource stops instead of
   * hammering a saga that will fail again.
   */
  private sendError(problem: Problem, previous: unknown): void {
    const data = JSON.stringify(problem);
    if (isRetryable(problem.code)) this.write(formatEvent({ event: 'error', retry: ERROR_RETRY_MS, data }), 1);
    else this.write(formatEvent({ event: 'error', id: this.endToken(previous), data }), 1);
  }

  private readonly ping = (): void => {
    if (this.closed) return;
    // A full socket gets no ping: it would only grow the buffer; the stall timer handles it.
    if (!this.res.writableNeedDrain) this.write(formatComment('ping'), 0);
    this.heartbeat.refresh();
  };

  private arm(ms: number, fn: () => void): void {
    this.disarm();
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.shared.metrics.streamTimers--;
      fn();
    }, ms);
    this.shared.metrics.streamTimers++;
  }

  private disarm(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.shared.metrics.streamTimers--;
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      if (this.closed) return resolve();
      this.wake = () => resolve();
      this.arm(ms, () => resolve());
    }).finally(() => {
      this.wake = undefined;
    });
  }

  /** Resolves true once the socket has drained, false when it closed or stalled too long. */
  private drained(): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    if (!this.res.writableNeedDrain) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const onDrain = (): void => {
        this.disarm();
        done(true);
      };
      const done = (ok: boolean): void => {
        this.res.off('drain', onDrain);
        this.wake = undefined;
        resolve(ok && !this.closed);
      };
      this.wake = () => done(false);
      this.res.on('drain', onDrain);
      this.arm(this.shared.settings.stallTimeoutMs, () => {
        this.shared.log.info({ requestId: this.spec.requestId }, 'stream stalled; closing');
        done(false);
        this.res.destroy();
      });
    });
  }
}
