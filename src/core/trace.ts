import type { ErrorInfo } from './errors.js';
import { DEFAULT_MASKER, MASK, type Masker } from './sensitive.js';
import type { Outcome, Payload } from './types.js';

/**
 * Run traces for the console (docs/console.md): what a saga run did, step by step. The engine
 * reports each step through `StepTracer`; a `TraceBus` per process hands finished runs to
 * whoever listens (the console's feed in the same process, the NATS publisher of a runner
 * process). Nothing is traced while nobody listens: `TraceBus.begin` answers undefined and the
 * engine then does no work at all for traces.
 */

/** One step of a traced run. */
export interface StepRecord {
  step: string;
  /** the step's kind (`event`, `transform`, ...) */
  kind: string;
  /** `SUCCESS`, `FAIL`, `ACK` or `TIMEOUT` */
  status: string;
  /** a condition step's value */
  value?: string;
  /** time the step took, in milliseconds (3 decimals) */
  ms: number;
  error?: ErrorInfo;
  /** the payload after the step: JSON, sensitive keys masked, cut at the snapshot size */
  payload?: string;
  /** each try of a step tried more than once (its `retry`), in order */
  attempts?: TryRecord[];
}

/** One try of a retried event step or undo. */
export interface TryRecord {
  /** from 1 */
  attempt: number;
  /** `SUCCESS`, `ACK`, `FAIL` or `TIMEOUT` */
  status: string;
  ms: number;
  /** the error code of a failed try */
  code?: string;
}

/** One compensation (undo event) of a failed run, in the order they ran (reverse of registration). */
export interface UndoRecord {
  /** the step it undoes */
  step: string;
  /** its idempotency key (`<runId>:<step>:undo`) */
  key: string;
  /** `SUCCESS`, `ACK`, `FAIL` or `TIMEOUT`, after its own retries */
  status: string;
  ms: number;
  error?: ErrorInfo;
  /** each try, when it was tried more than once */
  attempts?: TryRecord[];
}

/** A finished run, as the console shows it. */
export interface RunRecord {
  /** the gateway's request id (`X-Request-Id`) */
  requestId: string;
  runId?: string;
  runner: string;
  sagaId: string;
  method: string;
  path: string;
  outcome: Outcome;
  http: number;
  /** epoch ms when the run started */
  at: number;
  ms: number;
  steps: StepRecord[];
  /** steps left out (a run longer than MAX_TRACED_STEPS) */
  droppedSteps?: number;
  error?: ErrorInfo;
  /** the compensations a failed run ran (absent: none registered) */
  undos?: UndoRecord[];
  /** how its compensations ended: all undone, or some failed */
  compensation?: 'COMPLETED' | 'PARTIAL';
}

/**
 * Called by the engine after each step of a traced run. Its two members, when set, are told
 * about each try of a retried step (kept for that step's record, which follows) and each undo.
 */
export interface StepTracer {
  (record: Omit<StepRecord, 'payload' | 'attempts'>, payload: Payload): void;
  tried?: (step: string, attempt: TryRecord) => void;
  undone?: (record: UndoRecord) => void;
}

/** The trace of one run in progress. */
export interface RunTracer {
  step: StepTracer;
  end(result: { outcome: Outcome; http: number; error?: ErrorInfo; runId?: string }): void;
}

/** What a run is, before it ends. */
export interface RunStart {
  requestId: string;
  runner: string;
  sagaId: string;
  method: string;
  path: string;
}

/** Steps one trace keeps at most; a longer run (a loop) keeps its first ones and counts the rest. */
export const MAX_TRACED_STEPS = 200;

export { MASK };

/** Whether a key names something that must never be shown (the built-in parts: core/sensitive.ts). */
export function isSensitiveKey(key: string): boolean {
  return DEFAULT_MASKER.key(key);
}

/**
 * JSON of `payload` with sensitive keys and values masked (`masker`), cut to at most `maxBytes`
 * bytes (then ending in `…`).
 */
export function snapshotOf(payload: unknown, maxBytes: number, masker: Masker = DEFAULT_MASKER): string {
  let text: string;
  // A lower bound of the characters written so far. Once it passes maxBytes, whatever follows
  // would be cut anyway and is not serialised: a traced step costs about the snapshot's budget,
  // not the payload's size (a client's 1 MB body, stringified after every step of every traced
  // run, would otherwise cost the gateway its CPU while a console watches).
  let written = 0;
  try {
    text =
      JSON.stringify(payload, function (this: unknown, key, value: unknown) {
        if (written > maxBytes) return undefined;
        // A string is searched for a JWT or card number only as far as a snapshot could show it.
        const hidden = (key !== '' && !Array.isArray(this) && masker.key(key)) || masker.value(value, maxBytes);
        const out = hidden ? MASK : value;
        written += (Array.isArray(this) ? 0 : key.length) + (typeof out === 'string' ? out.length : 1);
        return out;
      }) ?? '';
  } catch {
    return '"(not serialisable)"';
  }
  if (Buffer.byteLength(text) <= maxBytes) return text;
  // Cut by bytes, then drop a split UTF-8 sequence at the end (decoding would make it U+FFFD).
  const cut = Buffer.from(text)
    .subarray(0, Math.max(0, maxBytes - 3))
    .toString('utf8');
  return cut.replace(/\uFFFD$/, '') + '…';
}

/** Where finished runs can be listened to (a process's TraceBus, or the runners' traces over NATS). */
export interface TraceSource {
  /** Receive every finished run until the returned function is called. */
  listen(listener: (run: RunRecord) => void): () => void;
}

/**
 * The traces of one process. `listen` registers a consumer of finished runs; `begin` starts a
 * run's trace only while one is registered, so an unwatched process pays one property read per
 * run. Under load, at most `perSecond` runs a second are traced (a token bucket): the others run
 * untraced, so a console left open costs a bounded amount whatever the traffic.
 */
export class TraceBus implements TraceSource {
  private readonly listeners = new Set<(run: RunRecord) => void>();
  private tokens: number;
  private refilled = performance.now();
  /** runs left untraced by the sampling since the start */
  skipped = 0;

  constructor(
    /** bytes of one step's payload snapshot */
    private readonly snapshotBytes = 2048,
    /** runs traced per second at most */
    private readonly perSecond = 50,
    /** what snapshots mask (gateway.console.mask added to the built-in parts) */
    private readonly masker: Masker = DEFAULT_MASKER,
  ) {
    this.tokens = perSecond;
  }

  /** Whether anyone listens (runs are traced). */
  get active(): boolean {
    return this.listeners.size > 0;
  }

  /** Receive every finished run until the returned function is called. */
  listen(listener: (run: RunRecord) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The trace of a run that starts now, or undefined when nobody listens. */
  begin(start: RunStart): RunTracer | undefined {
    if (this.listeners.size === 0 || !this.take()) return undefined;
    const at = Date.now();
    const began = performance.now();
    const steps: StepRecord[] = [];
    let dropped = 0;
    const bytes = this.snapshotBytes;
    const masker = this.masker;
    // Tries of the step in progress (reported before its record), and the undos of the unwind.
    let tries: { step: string; list: TryRecord[] } | undefined;
    const undos: UndoRecord[] = [];
    const step: StepTracer = (record, payload) => {
      const attempts = tries?.step === record.step && tries.list.length > 1 ? tries.list : undefined;
      tries = undefined;
      if (steps.length >= MAX_TRACED_STEPS) dropped++;
      else steps.push({ ...record, payload: snapshotOf(payload, bytes, masker), ...(attempts ? { attempts } : {}) });
    };
    step.tried = (id, attempt) => {
      if (tries?.step !== id) tries = { step: id, list: [] };
      if (tries.list.length < MAX_TRACED_STEPS) tries.list.push(attempt);
    };
    step.undone = (record) => {
      if (undos.length < MAX_TRACED_STEPS) undos.push(record);
    };
    return {
      step,
      end: (result) => {
        const compensation = result.error?.compensation;
        const run: RunRecord = {
          ...start,
          ...(result.runId !== undefined ? { runId: result.runId } : {}),
          outcome: result.outcome,
          http: result.http,
          at,
          ms: round(performance.now() - began),
          steps,
          ...(dropped > 0 ? { droppedSteps: dropped } : {}),
          ...(result.error ? { error: result.error } : {}),
          ...(undos.length > 0 ? { undos } : {}),
          ...(compensation ? { compensation } : {}),
        };
        this.emit(run);
      },
    };
  }

  private take(): boolean {
    const now = performance.now();
    this.tokens = Math.min(this.perSecond, this.tokens + ((now - this.refilled) / 1000) * this.perSecond);
    this.refilled = now;
    if (this.tokens < 1) {
      this.skipped++;
      return false;
    }
    this.tokens--;
    return true;
  }

  /** Hand a finished run (also one that came from another process) to every listener. */
  emit(run: RunRecord): void {
    for (const listener of this.listeners) {
      try {
        listener(run);
      } catch {
        // A consumer's failure must never reach the run that is being traced.
      }
    }
  }
}

/** Milliseconds to 3 decimals. */
export function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
