import { SchemaCompiler } from '../core/json-schema.js';
import { parseDuration } from '../core/units.js';
import { compileExpression, type Expression } from './expression.js';
import { parseOutputSpec, type OutputSpec } from './payload.js';
import type { RawEventMeta, RawStep } from './schema.js';

/**
 * The `wait` step's plan and its configuration checks (issue 21). A wait is a timer (`for`,
 * `until`: ends SUCCESS when due) or a signal (`signal`, optionally `approvals`: ends SIGNAL,
 * TIMEOUT, REJECTED or CANCELLED) that must name a `timeout`: no wait is unbounded.
 */

/** The wait-specific part of a compiled wait step (graph.ts WaitStep). */
export interface WaitPlan<M = unknown> {
  /** a timer's fixed length in ms (`for`) */
  readonly forMs: number | undefined;
  /** a timer's due time, computed from the payload (`until`) */
  readonly until: Expression | undefined;
  readonly signal:
    | {
        readonly name: string;
        readonly key: Expression | undefined;
        readonly roles: readonly string[];
        readonly schema: Record<string, unknown> | undefined;
      }
    | undefined;
  readonly approvals: { readonly required: number; readonly selfApproval: boolean } | undefined;
  /** how long a signal wait lasts (required with `signal`) */
  readonly timeoutMs: number | undefined;
  /** the event run once the wait is stored */
  readonly notify: M | undefined;
  /** where a signal's body goes (absent: nowhere) */
  readonly output: OutputSpec | undefined;
}

/** The longest `for` or `timeout`: 100 years (a date far past it is out of a Date's range). */
const MAX_WAIT_MS = 100 * 365.25 * 24 * 3600 * 1000;

/** The fields only a wait step may carry. */
const WAIT_ONLY = ['for', 'until', 'signal', 'approvals', 'timeout', 'notify'] as const;

type Err = (at: (string | number)[], message: string) => void;

/** Located errors of a step's wait fields (called by graph.ts checkStepSettings for every step). */
export function checkWaitStep(step: RawStep, i: number, err: Err): void {
  const at = (...p: (string | number)[]) => ['steps', i, ...p];
  if (step.type !== 'wait') {
    for (const key of WAIT_ONLY) if (step[key] !== undefined) err(at(key), `only a wait step has ${key}`);
    return;
  }
  const forms = (['for', 'until', 'signal'] as const).filter((k) => step[k] !== undefined);
  if (forms.length === 0) err(at(), 'a wait step needs one of for, until (a timer) or signal');
  if (forms.length > 1)
    err(at(forms[1]!), `a wait step is either a timer (for or until) or a signal, not ${forms.join(' and ')}`);
  if (step.signal !== undefined && step.timeout === undefined)
    err(at('timeout'), 'required: a signal wait needs a timeout (no unbounded waits)');
  if (step.signal === undefined && step.timeout !== undefined)
    err(at('timeout'), 'only a signal wait has a timeout (a timer ends when it is due)');
  if (step.approvals !== undefined && step.signal === undefined) err(at('approvals'), 'approvals need a signal');
  for (const key of ['for', 'timeout'] as const) {
    if (step[key] === undefined) continue;
    const ms = parseDuration(step[key]) ?? 0;
    if (!(ms > 0)) err(at(key), 'must be longer than 0');
    // past it, no date says when the wait is due, and every run would fail at the step
    else if (ms > MAX_WAIT_MS) err(at(key), 'must be at most 100 years');
  }
  tryExpression(step.until, at('until'), err);
  tryExpression(step.signal?.key, at('signal', 'key'), err);
  if (step.signal?.schema !== undefined) {
    try {
      signalSchemas.compile(step.signal.schema);
    } catch (e) {
      err(at('signal', 'schema'), `not a valid JSON Schema: ${(e as Error).message}`.slice(0, 300));
    }
  }
  if (step.outputElement === '-') err(at('outputElement'), '"-" is only for event steps');
  else if (step.outputElement !== undefined) {
    try {
      parseOutputSpec(step.outputElement);
    } catch (e) {
      err(at('outputElement'), (e as Error).message);
    }
  }
}

function tryExpression(source: string | undefined, at: (string | number)[], err: Err): void {
  if (source === undefined) return;
  try {
    compileExpression(source);
  } catch (e) {
    err(at, `JSONata: ${(e as { message?: string }).message ?? 'syntax error'}`);
  }
}

/** Plan a checked wait step; `planMeta` plans its notify event as graph.ts plans any event's settings. */
export function planWait<M>(step: RawStep, planMeta: (raw: RawEventMeta) => M): WaitPlan<M> {
  const signal = step.signal;
  return Object.freeze({
    forMs: parseDuration(step.for),
    until: step.until === undefined ? undefined : compileExpression(step.until),
    signal:
      signal === undefined
        ? undefined
        : Object.freeze({
            name: signal.name,
            key: signal.key === undefined ? undefined : compileExpression(signal.key),
            roles: Object.freeze([...(signal.roles ?? [])]),
            schema: signal.schema,
          }),
    approvals:
      step.approvals === undefined
        ? undefined
        : Object.freeze({ required: step.approvals.required, selfApproval: step.approvals.selfApproval === true }),
    timeoutMs: parseDuration(step.timeout),
    notify: step.notify === undefined ? undefined : planMeta(step.notify.eventMeta),
    output: step.outputElement === undefined ? undefined : parseOutputSpec(step.outputElement),
  });
}

/**
 * The JSON Schema compiler of signal bodies: the same rules as a saga's inputSchema (2020-12,
 * unknown keywords refused, formats checked; core/json-schema.ts), Ajv loaded at first use.
 */
export const signalSchemas = new SchemaCompiler();

/**
 * The refusal of `/api/stream/<path>` for a saga with a wait step (WAIT_NOT_STREAMABLE, 400):
 * every poll of a stream is a run of its own, so each would park a new run and answer nothing.
 * The gateway refuses before the stream opens, the runner before any step runs.
 */
export const NOT_STREAMABLE =
  'this saga has a wait step: it is served on /api/request/<path> only (each poll of a stream would park a new run)';
