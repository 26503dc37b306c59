import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '../../core/logger.js';

/**
 * Fewer socket writes: nats.js writes what was published at the end of the current microtask
 * queue, so a process that answers many messages per event-loop turn (a runner acknowledging and
 * replying to a batch of JetStream deliveries, an orchestrator publishing the events of many
 * runs) makes one `write` syscall per message or two. Here the write happens once per turn
 * (setImmediate): everything published while the turn's I/O callbacks ran goes out in one
 * write. Nothing waits longer than the rest of the current turn. The acknowledgements of
 * JetStream deliveries are batched this way too (an ack is a publish).
 *
 * This replaces one private method of the client's protocol object with a copy of nats.js
 * 3.3.1's own `sendCommand` (only `queueMicrotask` became `setImmediate`). So it is applied only
 * to exactly that client version, with the shape checked too; otherwise it switches itself off,
 * says so with a `warn` and counts it (coalesceSwitchedOff, `sagaway_transport_guards_off_total`
 * on /metrics): writes then go out as nats.js makes them, correct but slower.
 */

/** The nats.js version whose `sendCommand` this copies (the transport's CONNECT `version`). */
export const WRITTEN_FOR = '3.3.1';

interface Protocol {
  outbound: { length(): number; size(): number; fill(buf: Uint8Array, ...payloads: Uint8Array[]): void };
  pendingLimit: number;
  flushPending(): void;
  sendCommand(cmd: string | Uint8Array, ...payloads: Uint8Array[]): void;
  transport?: { version?: unknown };
}

const encoder = new TextEncoder();
let switchedOff = 0;

/** Connections of this process whose writes were left uncoalesced (the guard switched the patch off). */
export function coalesceSwitchedOff(): number {
  return switchedOff;
}

/** Why `p` is not the protocol object this patch was written for, or undefined when it is. */
function mismatch(p: Partial<Protocol> | undefined): string | undefined {
  if (!p) return 'no protocol object';
  const version = p.transport?.version;
  if (version !== WRITTEN_FOR) return `nats.js ${String(version)} (written for ${WRITTEN_FOR})`;
  const shaped =
    typeof p.sendCommand === 'function' &&
    typeof p.flushPending === 'function' &&
    typeof p.pendingLimit === 'number' &&
    typeof p.outbound?.fill === 'function' &&
    typeof p.outbound.length === 'function' &&
    typeof p.outbound.size === 'function';
  return shaped ? undefined : 'the protocol object has another shape';
}

/** Make `nc` write once per event-loop turn; returns whether it could (else warns on `log` and counts it). */
export function coalesceWrites(nc: NatsConnection, log: Logger): boolean {
  const p = (nc as unknown as { protocol?: Partial<Protocol> }).protocol;
  const why = mismatch(p);
  if (why !== undefined) {
    switchedOff++;
    log.warn({ reason: why }, 'NATS write coalescing switched off: the client is not the one it was written for');
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
