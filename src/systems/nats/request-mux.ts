import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';

/**
 * Request/reply with one reply subscription per connection (a wildcard inbox, `<inbox>.<n>`) and
 * a plain map of waiters: gateway -> runner calls, and JetStream publishes (a publish to a
 * stream's subject is answered with its PubAck, jetstreamPublish below). nats.js's own request() does the
 * same multiplexing but builds, per request, a RequestOne with a deferred, a timeout object and
 * (when it is cleaned up) a RequestError with its stack trace, ≈ 30 µs of the gateway's CPU per
 * request in bench/profile-remote.mjs; this keeps one small record and one timer per request.
 *
 * A request that finds no runner gets the server's "no responders" status (503, no data) on its
 * reply subject, which ends it at once, as with nats.js.
 */

/** Why a request got no answer. */
export class MuxRequestError extends Error {
  constructor(readonly kind: 'no-responders' | 'timeout') {
    super(kind === 'timeout' ? 'no answer in time' : 'no responders');
    this.name = 'MuxRequestError';
  }
}

interface Waiter {
  resolve(msg: Msg): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

/** One connection's multiplexed requests. */
export class RequestMux {
  private readonly prefix: string;
  private readonly sub: Subscription;
  private readonly waiting = new Map<string, Waiter>();
  private n = 0;

  constructor(
    private readonly nc: NatsConnection,
    inbox: string,
  ) {
    this.prefix = `${inbox}.`;
    this.sub = nc.subscribe(`${inbox}.*`, { callback: (err, msg) => (err ? undefined : this.answer(msg)) });
  }

  /** Send `data` to `subject`; resolves with the first answer, rejects with MuxRequestError. */
  request(subject: string, data: Uint8Array, timeoutMs: number): Promise<Msg> {
    const token = (this.n++).toString(36);
    return new Promise<Msg>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(token);
        reject(new MuxRequestError('timeout'));
      }, timeoutMs);
      this.waiting.set(token, { resolve, reject, timer });
      try {
        this.nc.publish(subject, data, { reply: this.prefix + token });
      } catch (err) {
        clearTimeout(timer);
        this.waiting.delete(token);
        reject(err as Error);
      }
    });
  }

  /** Requests waiting for an answer (tests). */
  get size(): number {
    return this.waiting.size;
  }

  close(): void {
    this.sub.unsubscribe();
    for (const w of this.waiting.values()) clearTimeout(w.timer);
    this.waiting.clear();
  }

  private answer(msg: Msg): void {
    const token = msg.subject.slice(this.prefix.length);
    const w = this.waiting.get(token);
    if (!w) return; // late (timed out) or unknown: dropped
    this.waiting.delete(token);
    clearTimeout(w.timer);
    if (msg.data.length === 0 && msg.headers?.code === 503) w.reject(new MuxRequestError('no-responders'));
    else w.resolve(msg);
  }
}

/**
 * Store `data` in the JetStream stream that captures `subject` and resolve with its sequence
 * number, once the server has stored it (its PubAck). The same as the JetStream client's
 * publish() without a message id, over the shared reply subscription. Rejects when no stream
 * captures the subject (no responders), on timeout, and with the server's error text.
 */
export async function jetstreamPublish(
  mux: RequestMux,
  subject: string,
  data: Uint8Array,
  timeoutMs: number,
): Promise<number> {
  const msg = await mux.request(subject, data, timeoutMs);
  let ack: { seq?: unknown; error?: { description?: unknown } };
  try {
    ack = JSON.parse(
      Buffer.from(msg.data.buffer, msg.data.byteOffset, msg.data.byteLength).toString('utf8'),
    ) as typeof ack;
  } catch {
    throw new Error('unreadable JetStream acknowledgement');
  }
  if (ack.error !== undefined || typeof ack.seq !== 'number') {
    throw new Error(
      `not stored: ${typeof ack.error?.description === 'string' ? ack.error.description : 'no sequence'}`,
    );
  }
  return ack.seq;
}
