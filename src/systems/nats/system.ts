import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type {
  MsgHdrs,
  Msg,
  NatsConnection,
  Payload,
  PublishOptions,
  RequestOptions,
  Subscription,
  SubscriptionOptions,
} from '@nats-io/transport-node';
import type { NatsSystemSettings } from '../../config/settings.js';
import type { Cancellable } from '../../core/cancel.js';
import { SagawayError, toErrorInfo } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { SagaRequest, SagaResult } from '../../core/types.js';
import { Directory } from './directory.js';
import { Names } from './names.js';
import type { PendingEvent, PendingReplies } from './pending.js';
import { decode, encode, eventWire, isReplyWire, replyRouteFor, type ReplyRoute } from './wire.js';
import type { EventMessage, EventReply } from '../../core/messages.js';
import type { System } from '../system.js';
import { ConnectionLostError, NotConnectedError, type NatsErrorTypes } from './errors.js';
import { runOverNats, unavailable } from './run-client.js';
import { jetstreamPublish, JetStreamPublishError, MuxRequestError, RequestMux } from './request-mux.js';
import { coalesceWrites } from './coalesce.js';
import { ensureStreams } from './streams.js';
import { connectUntilUp } from './connect.js';
import { traceHeaders, useHeaderFactory } from './trace-headers.js';

/** Fallback when the server does not say (NATS' own default). */
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;
/** How long a process waits after connecting for the runners' answers to its advertisement query. */
const WARM_UP_MS = 300;

/** Options of a NATS system. */
export interface NatsSystemOptions {
  settings: NatsSystemSettings;
  log: Logger;
  /** id of this process (reply routes, advertisements) */
  instance: string;
  /** events in flight of this process, shared by its nats systems */
  pending: PendingReplies;
  /** another nats system of this process by name (responseSystem) */
  peer(name: string): NatsSystem | undefined;
  /**
   * The process is a gateway alone (`sagaway gateway`): it sends saga requests and reads
   * outcomes, and never sends an event. It then sets up no stream and listens for no event
   * reply, so that its NATS user needs no permission for them (docs/distributed.md,
   * "Credentials and permissions"). Default false.
   */
  gatewayOnly?: boolean;
}

/**
 * The `nats` system (DESIGN §3): gateway -> runner saga requests over core NATS request/reply,
 * and events over JetStream with replies on core NATS (or JetStream for a `responseStream`).
 * Connecting never blocks startup and never crashes the process: while the broker is away,
 * calls answer RUNNER_UNAVAILABLE (503) at once, and everything resumes when it returns.
 * The nats.js client is imported lazily, so the embedded default never loads it.
 */
export class NatsSystem implements System {
  readonly type = 'nats' as const;
  readonly name: string;
  readonly names: Names;
  readonly directory: Directory;
  // The connection and its JetStream handles change at every (re)connection and close: private,
  // reached through publish / subscribe / request / flush / jetstream() below.
  private nc: NatsConnection | undefined;
  private js: JetStreamClient | undefined;
  private jsm: JetStreamManager | undefined;
  private connected = false;
  private closed = false;
  private warmAt = Number.POSITIVE_INFINITY;
  private readonly onConnect: (() => Promise<void>)[] = [];
  private readonly subs: Subscription[] = [];
  private connecting: Promise<void> | undefined;
  /** gateway requests waiting for a runner: failed at once when the connection drops */
  private readonly inFlightRuns = new Set<(reason: Error) => void>();
  /** gateway -> runner requests: one reply subscription for all of them (nats/request-mux.ts) */
  private requestMux: RequestMux | undefined;
  /** the client library's error classes, once it is loaded (errors are classified by type) */
  private errorTypes: NatsErrorTypes | undefined;
  private readonly log: Logger;

  constructor(private readonly options: NatsSystemOptions) {
    this.name = options.settings.name;
    this.names = new Names(options.settings.prefix);
    this.directory = new Directory(options.settings.advertiseIntervalMs);
    this.log = options.log.child({ system: this.name });
  }

  get settings(): NatsSystemSettings {
    return this.options.settings;
  }

  /** Whether the connection is up now. */
  get isConnected(): boolean {
    return this.connected;
  }

  /** Largest message the server accepts. */
  get maxPayload(): number {
    return this.nc?.info?.max_payload ?? DEFAULT_MAX_PAYLOAD;
  }

  /** Publish on core NATS (nothing stored); false when there is no connection. Throws what nats.js throws. */
  publish(subject: string, data?: Payload, options?: PublishOptions): boolean {
    if (!this.nc) return false;
    this.nc.publish(subject, data, options);
    return true;
  }

  /** Subscribe on the connection; undefined when there is none yet. */
  subscribe(subject: string, options: SubscriptionOptions): Subscription | undefined {
    return this.nc?.subscribe(subject, options);
  }

  /** nats.js's own request (headers, its timeout); rejects when there is no connection. */
  request(subject: string, data: Payload, options: RequestOptions): Promise<Msg> {
    return this.nc ? this.nc.request(subject, data, options) : Promise.reject(new NotConnectedError());
  }

  /** Resolves once the server has processed everything sent so far (no-op without a connection). */
  async flush(): Promise<void> {
    await this.nc?.flush();
  }

  /** The JetStream client and manager of the connection; throws NotConnectedError before the first one. */
  jetstream(): { client: JetStreamClient; manager: JetStreamManager } {
    if (!this.js || !this.jsm) throw new NotConnectedError();
    return { client: this.js, manager: this.jsm };
  }

  /** Run `hook` after every (re)connection, and now if connected. */
  whenConnected(hook: () => Promise<void>): void {
    this.onConnect.push(hook);
    if (this.connected) this.runHook(hook);
  }

  /** Start connecting in the background; resolves once the first connection is up (or never). */
  start(): Promise<void> {
    this.connecting ??= this.connectLoop();
    return this.connecting;
  }

  private async connectLoop(): Promise<void> {
    const { createInbox, RequestError, TimeoutError, NoRespondersError, headers } =
      await import('@nats-io/transport-node');
    useHeaderFactory(headers);
    this.errorTypes = { RequestError, TimeoutError, NoRespondersError };
    const { jetstream, jetstreamManager } = await import('@nats-io/jetstream');
    const nc = await connectUntilUp(this.options.settings, this.options.instance, this.log, () => this.closed);
    if (!nc) return;
    this.nc = nc;
    coalesceWrites(nc, this.log);
    this.requestMux = new RequestMux(nc, createInbox());
    this.js = jetstream(nc);
    this.jsm = await jetstreamManager(nc, { checkAPI: false });
    this.watchStatus(nc);
    this.subscribeCommon(nc);
    await this.connectedNow();
  }

  private watchStatus(nc: NatsConnection): void {
    void (async () => {
      for await (const status of nc.status()) {
        if (status.type === 'disconnect') {
          this.connected = false;
          // Their answers cannot arrive any more: answer 503 now rather than at the deadline.
          for (const fail of this.inFlightRuns) fail(new ConnectionLostError());
          this.log.warn('NATS connection lost; answering 503 until it returns');
        } else if (status.type === 'reconnect') {
          this.log.info('NATS connection back');
          await this.connectedNow();
          this.republishPending();
        }
      }
    })().catch((err: unknown) => this.log.error({ err }, 'NATS status watcher stopped'));
  }

  private async connectedNow(): Promise<void> {
    try {
      if (this.options.gatewayOnly !== true) await this.ensureStreams();
    } catch (err) {
      this.log.error({ err: errText(err) }, 'cannot set up JetStream streams; will retry on the next reconnect');
    }
    this.connected = true;
    this.warmAt = Math.min(this.warmAt, Date.now() + WARM_UP_MS);
    this.nc?.publish(this.names.advQuery);
    for (const hook of this.onConnect) this.runHook(hook);
  }

  private runHook(hook: () => Promise<void>): void {
    hook().catch((err: unknown) => this.log.error({ err: errText(err) }, 'NATS setup step failed'));
  }

  /** The events and responses streams; created or updated to the wanted config (nats/streams.ts). */
  private ensureStreams(): Promise<void> {
    return ensureStreams(this.jsm!, this.names, this.options.settings);
  }

  /** Replies to this process (both routes), advertisements, and max-delivery advisories. */
  private subscribeCommon(nc: NatsConnection): void {
    const onReply = (data: Uint8Array): void => {
      const m = decode(data);
      if (!m || !isReplyWire(m)) {
        this.log.warn('malformed reply dropped');
        return;
      }
      this.options.pending.reply(m.eventId, m.reply, m.runner);
    };
    const sub = (subject: string, cb: (data: Uint8Array) => void): void => {
      this.subs.push(nc.subscribe(subject, { callback: (err, msg) => (err ? undefined : cb(msg.data)) }));
    };
    sub(this.names.adv, (data) => {
      try {
        this.directory.accept(JSON.parse(Buffer.from(data).toString('utf8')));
      } catch {
        /* not an advertisement */
      }
    });
    if (this.options.gatewayOnly === true) return; // it sends no event: no reply comes to it
    sub(this.names.reply(this.options.instance), onReply);
    sub(this.names.responsesFor(this.options.instance), onReply);
    sub(`$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.${this.names.eventsStream}.*`, (data) => {
      try {
        const adv = JSON.parse(Buffer.from(data).toString('utf8')) as { stream_seq?: unknown };
        if (typeof adv.stream_seq === 'number') this.options.pending.exhausted(this.name, adv.stream_seq);
      } catch {
        /* ignore */
      }
    });
  }

  /** Gateway -> runner: run a saga on any live replica of `runner`. Never rejects (nats/run-client.ts). */
  run(runner: string, req: SagaRequest): Promise<SagaResult> {
    const mux = this.requestMux;
    // nothing was sent: no runner took it
    if (!mux || !this.connected)
      return Promise.resolve({ ...unavailable(`the broker of system "${this.name}" is not reachable`), ran: 'none' });
    return runOverNats(
      {
        mux,
        names: this.names,
        maxPayload: this.maxPayload,
        runGraceMs: this.options.settings.runGraceMs,
        errorTypes: this.errorTypes,
        inFlight: this.inFlightRuns,
        liveInstances: (name) => {
          const live = new Set<string>();
          for (const ad of this.directory.live())
            if (ad.runner === name && ad.system === this.name) live.add(ad.instance);
          return live;
        },
      },
      runner,
      req,
    );
  }

  /**
   * Orchestrator -> executing runners (DESIGN §6.1): publish the event to every live
   * (runner, deployment) consuming its stream (or those of `deployments`), and resolve with the
   * first reply. Never rejects; resolves at once when `cancel` aborts.
   */
  async dispatch(event: EventMessage, cancel: Cancellable): Promise<EventReply> {
    const js = this.js;
    if (!js || !this.connected)
      return failReply('RUNNER_UNAVAILABLE', `the broker of system "${this.name}" is not reachable`);
    if (Date.now() < this.warmAt) await sleep(this.warmAt - Date.now());
    const found = this.directory.targets(this.name, event.stream, event.meta);
    if ('error' in found)
      return { status: 'FAIL', error: found.error, inputElement: null, outputElement: null, sent: false };
    const route = replyRouteFor(event.meta, this, (n) => this.options.peer(n), this.options.instance);
    if ('error' in route)
      return { status: 'FAIL', error: route.error, inputElement: null, outputElement: null, sent: false };

    let resolve!: (r: EventReply) => void;
    const done = new Promise<EventReply>((r) => (resolve = r));
    const pending: PendingEvent = {
      eventId: event.id,
      stream: event.stream,
      stepId: event.stepId,
      system: this.name,
      targets: found.targets,
      messages: new Map(),
      exhausted: new Set(),
      rounds: 0,
      seqKeys: [],
      resolve,
    };
    // tracing: the step's context travels in the message headers (trace-headers.ts)
    if (event.trace !== undefined) pending.headers = traceHeaders(event.trace);
    try {
      for (const t of found.targets) {
        const wire = eventWire(event, route.route, t.runner, t.deployment);
        pending.messages.set(targetKey(t.runner, t.deployment), encode(wire, this.maxPayload, 'event'));
      }
    } catch (err) {
      return { status: 'FAIL', error: toErrorInfo(err), inputElement: null, outputElement: null, sent: false };
    }
    this.options.pending.add(pending);
    const onAbort = (): void => {
      this.options.pending.cancel(event.id);
      resolve({
        status: 'TIMEOUT',
        error: { code: 'EVENT_TIMEOUT', message: 'the event was cancelled', http: 504 },
        inputElement: null,
        outputElement: null,
      });
    };
    if (cancel.aborted) {
      // cancelled before it was sent: nothing to publish, nothing will answer
      onAbort();
      return await done;
    }
    const unlink = cancel.onAbort(onAbort);
    try {
      const sent = await this.publishAll(pending);
      if (sent === 0) {
        this.options.pending.cancel(event.id);
        // not `sent: false`: a store whose acknowledgement was lost may still deliver it
        return {
          ...failReply('RUNNER_UNAVAILABLE', `the event could not be stored on system "${this.name}"`),
          sent: undefined,
        };
      }
      if (found.targets.length > 1) {
        this.log.debug(
          {
            stream: event.stream,
            step: event.stepId,
            deployments: found.targets.map((t) => `${t.runner}/${t.deployment}`),
          },
          'event sent to several deployments (no deployments list); the first reply will be kept',
        );
      }
      return await done;
    } finally {
      unlink();
    }
  }

  /** Publish every copy of an event (again after a reconnect, with fresh message ids). */
  private async publishAll(p: PendingEvent): Promise<number> {
    let sent = 0;
    await Promise.all(
      p.targets.map(async (t) => {
        const key = targetKey(t.runner, t.deployment);
        try {
          // No message id: every publish of an event is meant to be delivered (a republish after a
          // reconnect is deliberate), so JetStream's de-duplication would only cost.
          const subject = this.names.event(p.stream, t.runner, t.deployment);
          const seq = await this.storeMessage(subject, p.messages.get(key)!, p.headers);
          this.options.pending.published(this.name, seq, p.eventId, key);
          sent++;
        } catch (err) {
          // by type: a broker refusal keeps its JetStream code, a missing stream or a timeout is a MuxRequestError
          const code =
            err instanceof JetStreamPublishError || err instanceof MuxRequestError ? { code: codeOf(err) } : {};
          this.log.warn({ err: errText(err), ...code, stream: p.stream, step: p.stepId }, 'event not stored');
        }
      }),
    );
    return sent;
  }

  /**
   * After a reconnect, replies sent while the connection was down are lost (core NATS): publish
   * the events still awaited once more. At-least-once: a runner may run one twice, with the
   * same idempotency key, and the second reply is dropped as a duplicate.
   */
  private republishPending(): void {
    for (const p of this.options.pending.byId.values()) {
      if (p.system !== this.name) continue;
      p.rounds++;
      void this.publishAll(p);
    }
  }

  /** Store a message in JetStream and answer its sequence (nats/request-mux.ts jetstreamPublish). */
  private storeMessage(subject: string, data: Uint8Array, headers?: MsgHdrs): Promise<number> {
    const mux = this.requestMux;
    if (!mux) return Promise.reject(new NotConnectedError());
    return jetstreamPublish(mux, subject, data, this.options.settings.publishTimeoutMs, headers);
  }

  /** Send a reply on its route (executing side); throws when it cannot be stored. */
  async sendReply(route: ReplyRoute, message: Uint8Array): Promise<void> {
    if (route.durable) {
      await this.storeMessage(route.subject, message);
    } else {
      if (!this.publish(route.subject, message)) throw new NotConnectedError();
    }
  }

  /** The runners' advertisement interval (systems.X.advertiseInterval). */
  get advertiseIntervalMs(): number {
    return this.options.settings.advertiseIntervalMs;
  }

  async ready(): Promise<boolean> {
    return this.connected;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.connected = false;
    for (const s of this.subs) s.unsubscribe();
    this.requestMux?.close();
    this.requestMux = undefined;
    const nc = this.nc;
    this.nc = undefined;
    if (nc) await nc.drain().catch(() => nc.close());
  }
}

/** Key of a (runner, deployment) target. */
export function targetKey(runner: string, deployment: string): string {
  return `${runner}/${deployment}`;
}

/** The reply of an event that was not sent (or not stored): no handler got it. */
function failReply(code: 'RUNNER_UNAVAILABLE', message: string): EventReply {
  return {
    status: 'FAIL',
    error: toErrorInfo(new SagawayError(code, message)),
    inputElement: null,
    outputElement: null,
    sent: false,
  };
}

function codeOf(err: JetStreamPublishError | MuxRequestError): string {
  return err instanceof MuxRequestError ? err.kind : `${err.code}${err.errCode !== undefined ? `:${err.errCode}` : ''}`;
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, Math.max(0, ms)));
}
