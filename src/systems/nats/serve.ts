import type { ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import type { Msg, Subscription, SubscriptionOptions } from '@nats-io/transport-node';
import type { StreamBindingSettings } from '../../config/settings.js';
import { Cancel } from '../../core/cancel.js';
import { toErrorInfo } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { SagaRequest, SagaResult } from '../../core/types.js';
import type { NatsSystem } from './system.js';
import type { Advertisement } from './directory.js';
import { lineageFromWire } from '../../core/lineage.js';
import { decode, encode, failResult, isEventWire, isRunWire, WIRE_VERSION, type EventWire } from './wire.js';
import { traceOf } from './trace-headers.js';
import type { RunnerEndpoint, ServeObserver } from '../system.js';

/** The runners this process serves over NATS: the transports' one endpoint interface. */
export type NatsEndpoint = RunnerEndpoint;

/** Events one replica runs at once per stream (JetStream holds the rest). */
const CONCURRENCY = 64;
/** Fields of a stream binding's meta that change which function runs. */
const DYNAMIC_FIELDS = ['handler', 'action', 'version'];

/**
 * The runner side of a nats system in one process: serve gateway requests for the runners it
 * hosts (queue group per runner, so replicas share), consume the streams they bind on this
 * system (one durable consumer per stream, runner and deployment, so replicas of a deployment
 * share deliveries and never both get the same one), and advertise them.
 */
export class NatsServer {
  private readonly subs: Subscription[] = [];
  private readonly consumers: ConsumerMessages[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private stopping = false;
  private readonly log: Logger;

  constructor(
    private readonly system: NatsSystem,
    private readonly endpoints: readonly NatsEndpoint[],
    /** serve gateway requests for these endpoints on this system */
    private readonly serveRequests: boolean,
    /** another nats system of the process (a reply's responseSystem) */
    private readonly peer: (name: string) => NatsSystem | undefined,
    log: Logger,
    private readonly instance: string,
    private readonly observer: ServeObserver = {},
  ) {
    this.log = log.child({ system: system.name });
  }

  /** Start serving; everything is (re)established after each connection to the broker. */
  start(): void {
    let first = true;
    this.system.whenConnected(async () => {
      if (first) {
        first = false;
        this.subscribe();
        await this.consumeAll();
      } else {
        // A restarted broker without storage forgets consumers: make sure they exist.
        await this.ensureConsumers();
      }
      this.advertise();
    });
    this.timer = setInterval(() => this.advertise(), this.system.advertiseIntervalMs);
    this.timer.unref();
  }

  private bindings(): { endpoint: NatsEndpoint; binding: StreamBindingSettings }[] {
    return this.endpoints.flatMap((endpoint) =>
      Object.values(endpoint.streams)
        .filter((binding) => binding.system === this.system.name)
        .map((binding) => ({ endpoint, binding })),
    );
  }

  private subscribe(): void {
    const names = this.system.names;
    const sub = (subject: string, options: SubscriptionOptions): void => {
      const s = this.system.subscribe(subject, options);
      if (s) this.subs.push(s);
    };
    if (this.serveRequests) {
      for (const endpoint of this.endpoints) {
        const subject = names.run(endpoint.name);
        sub(subject, {
          queue: subject,
          callback: (err, msg) => {
            if (!err) this.track(this.serveRun(endpoint, msg));
          },
        });
      }
    }
    sub(names.advQuery, { callback: () => this.advertise() });
  }

  private async ensureConsumers(): Promise<void> {
    const jsm = this.system.jetstream().manager;
    const { AckPolicy, DeliverPolicy } = await import('@nats-io/jetstream');
    const { nanos } = await import('@nats-io/transport-node');
    const s = this.system.settings;
    for (const { endpoint, binding } of this.bindings()) {
      const durable = this.system.names.consumer(binding.name, endpoint.name, endpoint.deployment);
      const config = {
        durable_name: durable,
        description: `sagaway stream ${binding.name}, runner ${endpoint.name}, deployment ${endpoint.deployment}`,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: nanos(s.ackWaitMs),
        max_deliver: s.maxDeliver,
        max_ack_pending: CONCURRENCY * 16,
        filter_subject: this.system.names.event(binding.name, endpoint.name, endpoint.deployment),
      };
      try {
        await jsm.consumers.add(this.system.names.eventsStream, config);
      } catch {
        const { durable_name: _d, deliver_policy: _p, filter_subject: _f, ...update } = config;
        await jsm.consumers.update(this.system.names.eventsStream, durable, update);
      }
    }
  }

  private async consumeAll(): Promise<void> {
    await this.ensureConsumers();
    for (const { endpoint, binding } of this.bindings()) void this.consumeLoop(endpoint, binding);
  }

  /** Pull from one durable consumer until stopped; a broken iterator is reopened. */
  private async consumeLoop(endpoint: NatsEndpoint, binding: StreamBindingSettings): Promise<void> {
    const durable = this.system.names.consumer(binding.name, endpoint.name, endpoint.deployment);
    while (!this.stopping) {
      try {
        const consumer = await this.system.jetstream().client.consumers.get(this.system.names.eventsStream, durable);
        const messages = await consumer.consume({ max_messages: CONCURRENCY });
        this.consumers.push(messages);
        for await (const m of messages) this.track(this.runEvent(endpoint, binding, m));
      } catch (err) {
        if (this.stopping) return;
        this.log.warn({ err: (err as Error).message, stream: binding.name }, 'event consumer interrupted; reopening');
        await new Promise((r) => setTimeout(r, 500));
        await this.ensureConsumers().catch(() => undefined);
      }
    }
  }

  private track(p: Promise<void>): void {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  /** Gateway request: run the saga and answer with its result. */
  private async serveRun(endpoint: NatsEndpoint, msg: Msg): Promise<void> {
    const m = decode(msg.data);
    let result: SagaResult;
    if (!m || !isRunWire(m)) {
      result = failResult({ code: 'INTERNAL', message: 'unreadable saga request', http: 500 });
    } else {
      const { v: _v, trace: _t, ...req } = m;
      // tracing: the gateway's context comes in the headers only (trace-headers.ts)
      const trace = traceOf(msg.headers);
      if (trace !== undefined) (req as SagaRequest).trace = trace;
      const t0 = performance.now();
      result = await endpoint.run(req as SagaRequest);
      this.observer.run?.(result.outcome, (performance.now() - t0) / 1000);
    }
    let data: Uint8Array;
    try {
      data = encode({ ...result, v: WIRE_VERSION }, this.system.maxPayload, 'response');
    } catch (err) {
      data = encode(
        { ...failResult({ ...toErrorInfo(err), http: 502 }), v: WIRE_VERSION },
        this.system.maxPayload,
        'response',
      );
    }
    msg.respond(data);
  }

  /**
   * One delivery of an event. The message is acknowledged only after the reply is sent, so a
   * replica that dies mid-action leaves it to be redelivered (after ackWait) to another replica
   * of the same deployment. While the action runs, `working()` keeps the delivery ours.
   */
  private async runEvent(endpoint: NatsEndpoint, binding: StreamBindingSettings, m: JsMsg): Promise<void> {
    const wire = decode(m.data);
    if (!wire || !isEventWire(wire)) {
      this.log.warn({ stream: binding.name }, 'malformed event dropped');
      m.term();
      return;
    }
    const event = wire as EventWire;
    // Another process's count of the request's runs: checked, never trusted as is (core/lineage.ts).
    const lineage = lineageFromWire(event.lineage);
    if (lineage) event.lineage = lineage;
    else delete event.lineage;
    // tracing: the step's context from the headers only; the try number checked (trace-headers.ts)
    const trace = traceOf(m.headers);
    if (trace !== undefined) event.trace = trace;
    else delete event.trace;
    if (!(Number.isInteger(event.attempt) && event.attempt! > 1 && event.attempt! <= 1000)) delete event.attempt;
    const left = event.deadline - Date.now();
    if (left <= 0) {
      // Nobody waits for it any more (the step timed out): do not run it late.
      m.ack();
      return;
    }
    const cancel = new Cancel();
    const deadlineTimer = setTimeout(() => cancel.abort(), left);
    const keepAlive = setInterval(() => m.working(), Math.max(100, Math.floor(this.system.settings.ackWaitMs / 3)));
    try {
      const t0 = performance.now();
      const reply = await endpoint.execute(event, binding, cancel);
      this.observer.event?.(binding.name, reply.status, (performance.now() - t0) / 1000, m.info.deliveryCount > 1);
      const system = event.reply.system === this.system.name ? this.system : this.peer(event.reply.system);
      if (!system) {
        this.log.warn({ system: event.reply.system }, 'reply system not connected here; reply dropped');
        m.ack();
        return;
      }
      let data: Uint8Array;
      const message = {
        v: WIRE_VERSION,
        eventId: event.id,
        runner: endpoint.name,
        reply: { ...reply, deployment: endpoint.deployment },
      };
      try {
        data = encode(message, system.maxPayload, 'reply');
      } catch (err) {
        const error = toErrorInfo(err);
        data = encode(
          {
            ...message,
            reply: { status: 'FAIL', error, inputElement: null, outputElement: null, deployment: endpoint.deployment },
          },
          system.maxPayload,
          'reply',
        );
      }
      await system.sendReply(event.reply, data);
      m.ack();
    } catch (err) {
      // Not acknowledged: JetStream delivers it again after ackWait (at most maxDeliver times).
      this.log.warn(
        { err: (err as Error).message, stream: binding.name, step: event.stepId },
        'reply not sent; the event will be redelivered',
      );
    } finally {
      clearTimeout(deadlineTimer);
      clearInterval(keepAlive);
    }
  }

  private advertisements(bye = false): Advertisement[] {
    return this.endpoints.map((endpoint) => {
      const streams: Advertisement['streams'] = {};
      for (const b of Object.values(endpoint.streams)) {
        if (b.system !== this.system.name) continue;
        streams[b.name] = {
          ...(b.handler !== undefined ? { handler: b.handler } : {}),
          dynamic: Object.keys(b.meta).some((k) => DYNAMIC_FIELDS.includes(k)),
        };
      }
      const offer = endpoint.describe();
      return {
        v: 1,
        instance: this.instance,
        runner: endpoint.name,
        deployment: endpoint.deployment,
        system: this.system.name,
        streams,
        handlers: offer.handlers,
        actions: offer.actions,
        ...(bye ? { bye: true } : {}),
      };
    });
  }

  private advertise(bye = false): void {
    if (!this.system.isConnected) return;
    for (const ad of this.advertisements(bye)) this.system.publish(this.system.names.adv, JSON.stringify(ad));
  }

  /** Stop taking work, let running events finish (bounded), and say goodbye. */
  async stop(graceMs = 5000): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    for (const s of this.subs) s.unsubscribe();
    for (const c of this.consumers) await c.close().catch(() => undefined);
    let grace: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.inFlight]),
      new Promise((r) => {
        grace = setTimeout(r, graceMs);
      }),
    ]);
    clearTimeout(grace);
    this.advertise(true);
    await this.system.flush().catch(() => undefined);
  }
}
