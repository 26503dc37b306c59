import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RunRecord, TraceSource } from '../../core/trace.js';
import type { GatewayContext } from '../context.js';
import { problemFor, sendProblem } from '../http/helpers/problem.js';
import { formatComment, formatEvent } from '../stream/writer.js';

/**
 * The console's live runs: a bounded ring of the latest traced runs, and an SSE feed of them
 * (`event: run`, `id: <sequence>`), written with the gateway's own SSE writer and admitted by
 * the gateway's stream limits. Runs are traced only while a console watches (`TraceSource.listen`
 * is called on the first watcher and released a grace period after the last one left, so that a
 * reload keeps the trace going). A watcher that does not read loses runs rather than holding
 * memory: past `maxBuffered` queued bytes its events are skipped and it is told how many.
 */

/** Runs the ring keeps at most. */
export const RING_RUNS = 200;
/** Bytes of JSON the ring keeps at most (older runs go first). */
export const RING_BYTES = 8 * 1024 * 1024;
/** How long runs are still traced after the last watcher left. */
const GRACE_MS = 10_000;

interface Entry {
  seq: number;
  data: string;
}

interface Watcher {
  reply: FastifyReply;
  skipped: number;
  stop(): void;
}

/** The ring and the feed of one gateway. */
export class ConsoleFeed {
  private readonly ring: Entry[] = [];
  /** Event ids are `<epoch>.<sequence>`: a Last-Event-ID from before a restart replays the whole ring. */
  private readonly epoch = Date.now().toString(36);
  private bytes = 0;
  private seq = 0;
  private readonly watchers = new Set<Watcher>();
  private unlisten: (() => void) | undefined;
  private grace: NodeJS.Timeout | undefined;

  constructor(
    private readonly ctx: GatewayContext,
    private readonly sources: readonly TraceSource[],
  ) {}

  /** Number of open feeds (tests). */
  get watching(): number {
    return this.watchers.size;
  }

  /** Whether runs are being traced now. */
  get tracing(): boolean {
    return this.unlisten !== undefined;
  }

  /** Add a finished run to the ring and send it to every watcher. */
  add(run: RunRecord): void {
    const entry = { seq: ++this.seq, data: JSON.stringify(run) };
    this.ring.push(entry);
    this.bytes += entry.data.length;
    while (this.ring.length > RING_RUNS || (this.bytes > RING_BYTES && this.ring.length > 1)) {
      this.bytes -= this.ring.shift()!.data.length;
    }
    for (const w of this.watchers) this.send(w, entry);
  }

  private send(w: Watcher, entry: Entry): void {
    const raw = w.reply.raw;
    if (raw.writableLength > this.ctx.settings.stream.maxBuffered) {
      w.skipped++;
      return;
    }
    if (w.skipped > 0) {
      raw.write(formatEvent({ event: 'skipped', data: JSON.stringify({ runs: w.skipped }) }));
      w.skipped = 0;
    }
    raw.write(formatEvent({ event: 'run', id: `${this.epoch}.${entry.seq}`, data: entry.data }));
  }

  private watch(): void {
    clearTimeout(this.grace);
    this.grace = undefined;
    if (this.unlisten) return;
    const stops = this.sources.map((s) => s.listen((run) => this.add(run)));
    this.unlisten = () => stops.forEach((stop) => stop());
  }

  private unwatchLater(): void {
    if (this.watchers.size > 0 || !this.unlisten) return;
    clearTimeout(this.grace);
    this.grace = setTimeout(() => this.stopTracing(), GRACE_MS);
    this.grace.unref();
  }

  private stopTracing(): void {
    clearTimeout(this.grace);
    this.grace = undefined;
    this.unlisten?.();
    this.unlisten = undefined;
  }

  /**
   * GET <console>/api/feed: the ring (after Last-Event-ID, if sent), then every run as it ends.
   * `recheck` (with roles) runs at every heartbeat: false ends the feed with `event: error`
   * UNAUTHORIZED, so an expired token does not keep watching every caller's runs.
   */
  open(request: FastifyRequest, reply: FastifyReply, recheck?: () => Promise<boolean>): void {
    const client = `console:${request.ip}`;
    const refused = this.ctx.streams.admit(client);
    if (refused) {
      sendProblem(reply, problemFor(refused, request.id), { 'retry-after': '5' });
      return;
    }
    const raw = reply.raw;
    reply.hijack();
    raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
      'x-content-type-options': 'nosniff',
      'x-request-id': request.id,
    });
    raw.socket?.setTimeout(0);
    const [epoch, seq] = String(request.headers['last-event-id'] ?? '').split('.');
    const last = epoch === this.epoch ? Number(seq) : Number.NaN;
    let stopped = false;
    const beat = (ok: boolean): void => {
      if (stopped) return;
      if (ok) {
        raw.write(formatComment('ping'));
        return;
      }
      raw.write(formatEvent({ event: 'error', data: JSON.stringify(problemFor('UNAUTHORIZED', request.id)) }));
      watcher.stop();
    };
    const heartbeat = setInterval(() => {
      if (recheck) recheck().then(beat, () => beat(false));
      else beat(true);
    }, this.ctx.settings.stream.heartbeatMs);
    heartbeat.unref();
    const watcher: Watcher = {
      reply,
      skipped: 0,
      stop: () => {
        if (stopped) return;
        stopped = true;
        clearInterval(heartbeat);
        this.watchers.delete(watcher);
        this.ctx.streams.release(client, watcher);
        raw.end();
        this.unwatchLater();
      },
    };
    raw.on('close', watcher.stop);
    this.ctx.streams.add(watcher);
    raw.write(formatEvent({ event: 'hello', retry: 2000, data: JSON.stringify({ tracing: true }) }));
    for (const entry of this.ring) if (!(entry.seq <= last)) this.send(watcher, entry);
    this.watchers.add(watcher);
    this.watch();
  }

  /** End every feed and stop tracing (the gateway closes). */
  close(): void {
    for (const w of [...this.watchers]) w.stop();
    this.stopTracing();
  }
}
