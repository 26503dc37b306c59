import type { NatsConnection } from '@nats-io/transport-node';

/**
 * Fewer socket writes: nats.js writes what was published at the end of the current microtask
 * queue, so a process that answers many messages per event-loop turn (a runner acknowledging and
 * replying to a batch of JetStream deliveries, an orchestrator publishing the events of many
 * runs) makes one `write` syscall per message or two. Here the write happens once per turn
 * (setImmediate): everything published while the turn's I/O callbacks ran goes out in one
 * write. Nothing waits longer than the rest of the current turn. The acknowledgements of
 * JetStream deliveries are batched this way too (an ack is a publish).
 *
 * This replaces one method of the client's protocol object, whose shape is checked first: with
 * a client version that looks different, nothing is changed (the pinned version is 3.3.1).
 */

interface Protocol {
  outbound: { length(): number; size(): number; fill(buf: Uint8Array, ...payloads: Uint8Array[]): void };
  pendingLimit: number;
  flushPending(): void;
  sendCommand(cmd: string | Uint8Array, ...payloads: Uint8Array[]): void;
}

const encoder = new TextEncoder();

/** Make `nc` write once per event-loop turn; returns whether it could. */
export function coalesceWrites(nc: NatsConnection): boolean {
  const p = (nc as unknown as { protocol?: Partial<Protocol> }).protocol;
  if (
    !p ||
    typeof p.sendCommand !== 'function' ||
    typeof p.flushPending !== 'function' ||
    typeof p.pendingLimit !== 'number' ||
    typeof p.outbound?.fill !== 'function' ||
    typeof p.outbound.length !== 'function' ||
    typeof p.outbound.size !== 'function'
  ) {
    return false;
  }
  const proto = p as Protocol;
  proto.sendCommand = (cmd, ...payloads) => {
    const empty = proto.outbound.length() === 0;
    proto.outbound.fill(typeof cmd === 'string' ? encoder.encode(cmd) : cmd, ...payloads);
    if (empty) setImmediate(() => proto.flushPending());
    else if (proto.outbound.size() >= proto.pendingLimit) proto.flushPending();
  };
  return true;
}
