import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';

/**
 * Request/reply for gateway -> runner calls with one reply subscription per connection (a
 * wildcard inbox, `<inbox>.<n>`) and a plain map of waiters. nats.js's own request() does the
 * same multiplexing but builds, per request, a RequestOne with a deferred, a timeout object and
 * (when it is cleaned up) a RequestError with its stack trace, ≈ 30 µs of the gateway's CPU per
 * request in bench/profile-remote.mjs; this keeps one small record and one timer per request.
 *
 * A request that finds no runner gets the server's "no responders" status (503, no data) on its
 * reply subject, which ends it at once, as with nats.js.
 */

/** Why a request got no answer. */
export class RunRequestFailure extends Error {
  constructor(readonly kind: 'no-responders' | 'timeout') {
    super(kind === 'timeout' ? 'no answer in time' : 'no responders');
    this.name = 'RunRequestFailure';
  }
}

interface Waiter {
  resolve(msg: Msg): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

/** One connection's multiplexed requests. */
export class RunMux {
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

  /** Send `data` to `subject`; resolves with the first answer, rejects with RunRequestFailure. */
  request(subject: string, data: Uint8Array, timeoutMs: number): Promise<Msg> {
    const token = (this.n++).toString(36);
    return new Promise<Msg>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(token);
        reject(new RunRequestFailure('timeout'));
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
    if (msg.data.length === 0 && msg.headers?.code === 503) w.reject(new RunRequestFailure('no-responders'));
    else w.resolve(msg);
  }
}
