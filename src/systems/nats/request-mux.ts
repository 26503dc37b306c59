import type { Msg, MsgHdrs, NatsConnection, Subscription } from '@nats-io/transport-node';

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
  request(subject: string, data: Uint8Array, timeoutMs: number, headers?: MsgHdrs): Promise<Msg> {
    const token = (this.n++).toString(36);
    return new Promise<Msg>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(token);
        reject(new MuxRequestError('timeout'));
      }, timeoutMs);
      this.waiting.set(token, { resolve, reject, timer });
      try {
        this.nc.publish(
          subject,
          data,
          headers ? { reply: this.prefix + token, headers } : { reply: this.prefix + token },
        );
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
 * Why JetStream did not store a message, by code (never by its text, which the server words):
 * `refused`: the server answered with an error (its JetStream `errCode` and description kept);
 * `no-sequence`: the acknowledgement had neither error nor sequence; `unreadable`: it was not JSON.
 */
export class JetStreamPublishError extends Error {
  constructor(
    readonly code: 'refused' | 'no-sequence' | 'unreadable',
    /** the server's JetStream error code (`refused` only) */
    readonly errCode?: number,
    description?: string,
  ) {
    super(`not stored: ${description ?? code}`);
    this.name = 'JetStreamPublishError';
  }
}

/**
 * Store `data` in the JetStream stream that captures `subject` and resolve with its sequence
 * number, once the server has stored it (its PubAck). The same as the JetStream client's
 * publish() without a message id, over the shared reply subscription. Rejects with
 * MuxRequestError when no stream captures the subject (no responders) or on timeout, and with
 * JetStreamPublishError when the server does not store it.
 */
export async function jetstreamPublish(
  mux: RequestMux,
  subject: string,
  data: Uint8Array,
  timeoutMs: number,
  headers?: MsgHdrs,
): Promise<number> {
  const msg = await mux.request(subject, data, timeoutMs, headers);
  return pubAckSequence(msg.data);
}

/** The sequence of a PubAck, or the JetStreamPublishError it carries. */
export function pubAckSequence(data: Uint8Array): number {
  let ack: { seq?: unknown; error?: { err_code?: unknown; description?: unknown } };
  try {
    ack = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8')) as typeof ack;
  } catch {
    throw new JetStreamPublishError('unreadable');
  }
  if (ack.error !== undefined) {
    const { err_code: code, description } = ack.error ?? {};
    throw new JetStreamPublishError(
      'refused',
      typeof code === 'number' ? code : undefined,
      typeof description === 'string' ? description : undefined,
    );
  }
  if (typeof ack.seq !== 'number') throw new JetStreamPublishError('no-sequence');
  return ack.seq;
}
