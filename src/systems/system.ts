import type { Cancellable } from '../core/cancel.js';
import type { EventMessage, EventReply, SagaService } from '../core/messages.js';

/**
 * The transport contract. `local.ts` delivers in process; `nats.ts` (later) goes through NATS
 * JetStream. Both carry the same two kinds of traffic: gateway -> runner saga requests, and
 * orchestrator -> executing runner events with their replies.
 */

/** A transport. */
export interface System extends SagaService {
  readonly name: string;
  readonly type: 'local' | 'nats';
  /** deliver an event to the runner(s) consuming `event.stream` and resolve with the reply; never rejects, resolves at once when `cancel` aborts */
  dispatch(event: EventMessage, cancel: Cancellable): Promise<EventReply>;
  /** whether the transport is connected (readiness) */
  ready(): Promise<boolean>;
  close(): Promise<void>;
}
