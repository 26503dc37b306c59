import type { MsgHdrs } from '@nats-io/transport-node';
import { keepBounded } from '../../core/bounded-map.js';
import { toErrorInfo, SagawayError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { EventReply } from '../../core/messages.js';
import type { Target } from './directory.js';

/** An event waiting for its reply. */
export interface PendingEvent {
  eventId: string;
  stream: string;
  stepId: string;
  /** the nats system the event was published on */
  system: string;
  targets: Target[];
  /** encoded event per target, kept to publish again after a reconnect */
  messages: Map<string, Uint8Array>;
  /** the headers of every copy (a traced run's context: trace-headers.ts) */
  headers?: MsgHdrs | undefined;
  /** targets whose deliveries ran out (maxDeliver) */
  exhausted: Set<string>;
  /** republish rounds so far (fresh message ids) */
  rounds: number;
  /** keys of this event's copies in the sequence index */
  seqKeys: string[];
  resolve(reply: EventReply): void;
}

/**
 * Capacity of the memory of answered events, used to recognise duplicate replies. A reply that
 * arrives after its event ended (answered, cancelled, timed out) is dropped without being stored:
 * late replies cannot grow anything here.
 */
const ANSWERED_MEMORY = 10_000;

/**
 * Events in flight of one process, by event id, shared by its nats systems (a reply may come
 * back on another system: `responseSystem`). The first reply resolves the event; any later one
 * for the same id is a duplicate (another deployment, or a redelivery) and is only logged.
 */
export class PendingReplies {
  readonly byId = new Map<string, PendingEvent>();
  /** JetStream sequence (per system) -> event and target, to match max-delivery advisories */
  private readonly bySeq = new Map<string, { eventId: string; target: string }>();
  private readonly answered = new Map<string, true>();

  constructor(private readonly log: Logger) {}

  add(p: PendingEvent): void {
    this.byId.set(p.eventId, p);
  }

  /**
   * Remember where one target's copy of an event sits in the events stream. The store's ack may
   * come after the event ended (answered, or cancelled by its saga): then nothing is kept, or
   * the entry would stay in `bySeq` for ever (only an advisory for it would ever remove it).
   */
  published(system: string, seq: number, eventId: string, target: string): void {
    const p = this.byId.get(eventId);
    if (!p) return;
    const key = `${system}:${seq}`;
    this.bySeq.set(key, { eventId, target });
    p.seqKeys.push(key);
  }

  /** How much is held: events awaited, sequence entries, answered ids remembered (tests, metrics). */
  sizes(): { pending: number; sequences: number; answered: number } {
    return { pending: this.byId.size, sequences: this.bySeq.size, answered: this.answered.size };
  }

  /** Deliver a reply; duplicates and late replies are logged and dropped. */
  reply(eventId: string, reply: EventReply, runner: string): void {
    const p = this.byId.get(eventId);
    if (!p) {
      if (this.answered.has(eventId)) {
        this.log.warn(
          { eventId, runner, deployment: reply.deployment },
          'duplicate reply dropped (the first reply was kept)',
        );
      } else {
        this.log.debug({ eventId }, 'reply for an event no longer awaited');
      }
      return;
    }
    this.finish(p);
    p.resolve(reply);
  }

  /** A max-delivery advisory: when every target of the event ran out, the step fails. */
  exhausted(system: string, seq: number): void {
    const hit = this.bySeq.get(`${system}:${seq}`);
    if (!hit) return;
    this.bySeq.delete(`${system}:${seq}`);
    const p = this.byId.get(hit.eventId);
    if (!p) return;
    p.exhausted.add(hit.target);
    if (p.exhausted.size < p.targets.length) return;
    this.finish(p);
    const error = toErrorInfo(
      new SagawayError(
        'EVENT_DELIVERY_EXHAUSTED',
        `the event on stream "${p.stream}" was delivered the maximum number of times without an answer`,
      ),
    );
    p.resolve({ status: 'FAIL', error, inputElement: null, outputElement: null });
  }

  /** Stop waiting (the step was cancelled). */
  cancel(eventId: string): void {
    const p = this.byId.get(eventId);
    if (p) this.finish(p);
  }

  private finish(p: PendingEvent): void {
    this.byId.delete(p.eventId);
    for (const key of p.seqKeys) this.bySeq.delete(key);
    // Only events sent to several deployments can be answered twice in normal operation.
    keepBounded(this.answered, p.eventId, true, ANSWERED_MEMORY);
  }
}
