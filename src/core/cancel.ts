/**
 * A cancellation that costs nothing until something needs an `AbortSignal`.
 *
 * Every saga run, every event and every stream poll can be cancelled (deadline, client gone,
 * step timeout), but almost none are, and almost no action looks at `ctx.signal`. An
 * AbortController with a listener costs about 3 µs on Node 20 (EventTarget), a large share of a
 * one-step request; this class is a plain object with a callback list, and makes the
 * AbortController only when `signal` is read. `abort` then aborts it too, so code written
 * against AbortSignal sees the same behaviour.
 */
export class Cancel {
  private controller: AbortController | undefined;
  private listeners: (() => void)[] | undefined;
  private aborted_ = false;
  private reason_: unknown;

  /** whether `abort` was called */
  get aborted(): boolean {
    return this.aborted_;
  }

  /** what `abort` was called with */
  get reason(): unknown {
    return this.reason_;
  }

  /** An AbortSignal that follows this cancellation (made on first use). */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.aborted_) this.controller.abort(this.reason_);
    }
    return this.controller.signal;
  }

  /** Abort once: later calls do nothing. Listeners run in the order they were added. */
  abort(reason?: unknown): void {
    if (this.aborted_) return;
    this.aborted_ = true;
    this.reason_ = reason ?? new DOMException('This operation was aborted', 'AbortError');
    this.controller?.abort(this.reason_);
    const listeners = this.listeners;
    this.listeners = undefined;
    if (listeners) for (const fn of listeners) fn();
  }

  /**
   * Call `fn` when this aborts (at once when it already has). Returns the function that removes
   * `fn`: call it when the work ends, or a long-lived cancellation (a saga run making many calls)
   * keeps every finished call's callback.
   */
  onAbort(fn: () => void): () => void {
    if (this.aborted_) {
      fn();
      return noop;
    }
    (this.listeners ??= []).push(fn);
    return () => {
      const list = this.listeners;
      if (list === undefined) return;
      const i = list.indexOf(fn);
      if (i >= 0) list.splice(i, 1);
    };
  }

  /** A cancellation that follows `signal` (for callers that hand over an AbortSignal). */
  static fromSignal(signal: AbortSignal): Cancel {
    const cancel = new Cancel();
    if (signal.aborted) cancel.abort(signal.reason);
    else signal.addEventListener('abort', () => cancel.abort(signal.reason), { once: true });
    return cancel;
  }
}

/** What a cancellable operation receives: the lazy signal, and a cheap way to listen. */
export type Cancellable = Pick<Cancel, 'aborted' | 'reason' | 'signal' | 'onAbort'>;

const noop = (): void => {};
