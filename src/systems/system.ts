import type { StreamBindingSettings } from '../config/settings.js';
import type { Cancellable } from '../core/cancel.js';
import type { EventMessage, EventReply, SagaService } from '../core/messages.js';
import type { SagaRequest, SagaResult } from '../core/types.js';

/**
 * The transport contract. `local.ts` delivers in process; the NATS system (`nats.ts`, `nats/`)
 * goes through NATS JetStream. Both carry the same two kinds of traffic: gateway -> runner saga requests, and
 * orchestrator -> executing runner events with their replies.
 */

/**
 * A runner as every transport sees it, whether it is reached in process (`local`) or served over
 * NATS (structurally: systems never import the runner layer).
 */
export interface RunnerEndpoint {
  readonly name: string;
  readonly deployment: string;
  readonly streams: Readonly<Record<string, StreamBindingSettings>>;
  /** run the saga serving `req.path` (gateway -> runner); never throws */
  run(req: SagaRequest): Promise<SagaResult>;
  /** execute an event that reached this runner; never throws */
  execute(event: EventMessage, binding: StreamBindingSettings | undefined, cancel: Cancellable): Promise<EventReply>;
  /** handler -> action -> versions, and structural action aliases (advertised to orchestrators) */
  describe(): { handlers: Record<string, Record<string, number[]>>; actions: string[] };
  /** the gateway runs in flight in this process: how many, and the oldest `limit` (`sagaway admin runs`) */
  inFlightRuns?(limit: number): { count: number; runs: { requestId: string; saga: string; startedAt: number }[] };
}

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
