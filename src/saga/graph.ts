import { suggestion } from '../core/suggest.js';
import type { RawEventMeta, RawSaga, RawStep } from './schema.js';
import { SagawayError } from '../core/errors.js';
import { parsePathCached } from '../core/path.js';
import { parseDuration } from '../core/units.js';
import { compileExpression, type Expression } from './expression.js';
import { parseElements, parseOutputSpec, type OutputSpec, type ParsedElements } from './payload.js';
import { checkWaitStep, planWait, type WaitPlan } from './wait-plan.js'; // waits:
import { checkTimer, checkUndoSettings } from './undo-check.js';
import { planRetry, type RetryPlan } from './retry.js';

export type { RetryPlan } from './retry.js';

/**
 * A saga compiled for running: steps by id, links sorted by priority, expressions compiled and
 * paths parsed. `checkSaga` finds every configuration error of a saga with its location;
 * compile.ts runs it and `planSaga` as one pass.
 */

export type StepType = RawStep['type'];

/** A link with its `when` values as strings (YAML `true` and "true" are the same). */
export interface CompiledLink {
  /** id of the step it leads to */
  readonly to: string;
  /** that step itself (resolved once, at compile time) */
  readonly target: CompiledStep;
  /** values this link is taken for; null = no `when` (taken after success) */
  readonly when: ReadonlySet<string> | null;
  /** `"*"` is one of its values: taken when no other link matches */
  readonly wildcard: boolean;
  readonly priority: number;
}

/** What every step kind has. */
interface StepBase {
  readonly id: string;
  /** the step's own autoFail; undefined = the saga's */
  readonly autoFail: boolean | undefined;
  /** sorted: highest priority first, then the order written */
  readonly links: readonly CompiledLink[];
  /** the step as configured (names, colours and descriptions for graphs) */
  readonly raw: RawStep;
}

/** `start`: where a run begins. */
export interface StartStep extends StepBase {
  readonly type: 'start';
}

/** `event`: a remote function call (DESIGN §6). */
export interface EventStep extends StepBase {
  readonly type: 'event';
  readonly meta: CompiledEventMeta;
  /** tries of one visit; undefined = one try */
  readonly retry: RetryPlan | undefined;
  /** the event that undoes the step, registered when it succeeds */
  readonly compensate: CompensatePlan | undefined;
  /** once it succeeds, earlier compensations are dropped */
  readonly pivot: boolean;
}

/** An event step's `compensate`: the undo event's settings and its own retry. */
export interface CompensatePlan {
  readonly meta: CompiledEventMeta;
  readonly retry: RetryPlan | undefined;
}

/** `transform`: JSONata over the payload, written at `output` or replacing the payload. */
export interface TransformStep extends StepBase {
  readonly type: 'transform';
  readonly expression: Expression;
  readonly output: OutputSpec | undefined;
}

/** `condition`: JSONata whose value picks the link. */
export interface ConditionStep extends StepBase {
  readonly type: 'condition';
  readonly expression: Expression;
}

/** `success`: ends the run with `http` and the response at `output` (or the payload). */
export interface SuccessStep extends StepBase {
  readonly type: 'success';
  readonly output: OutputSpec | undefined;
  readonly http: number;
}

/** `fail`: ends the run with its error, else the last step error. */
export interface FailStep extends StepBase {
  readonly type: 'fail';
  readonly error: { readonly code?: string; readonly message?: string; readonly http?: number } | undefined;
  /** run the registered compensations when the saga ends here (`compensate: false` says no) */
  readonly compensate: boolean;
}

// waits: the `wait` step (issue 21): a timer or a signal; saga/wait-plan.ts
/** `wait`: parks the run until a timer falls due or a signal comes (saga/wait-step.ts). */
export interface WaitStep extends StepBase {
  readonly type: 'wait';
  readonly wait: WaitPlan<CompiledEventMeta>;
}

/** A compiled step: one variant per kind, each with exactly its own settings. */
export type CompiledStep = StartStep | EventStep | TransformStep | ConditionStep | SuccessStep | FailStep | WaitStep;

/**
 * An event step's settings as the orchestrator uses them: the raw form (what travels to the
 * executing runner, which applies its own layers and inject), and what the orchestrator itself
 * needs, parsed once. Paths that hold inject placeholders can only be parsed after inject, on the
 * executing side; `input`/`output` are then undefined and the reply's elements are parsed instead.
 */
export interface CompiledEventMeta {
  readonly raw: RawEventMeta;
  /** the event stream (`local` by default) */
  readonly stream: string;
  /** the step's own timeout in ms; undefined = the saga's deadline only */
  readonly timeoutMs: number | undefined;
  readonly followAck: boolean;
  /**
   * The step's own input and output elements, parsed; used when the reply reports the same
   * text (no layer or inject changed them, the common case). Undefined when a placeholder makes
   * them known only after inject.
   */
  readonly elements:
    { readonly input: string | null; readonly output: string | null; readonly parsed: ParsedElements } | undefined;
}

/** A saga compiled for running: frozen, built once before any runner starts. */
export interface CompiledSaga {
  readonly id: string;
  readonly path: string;
  readonly methods: readonly string[];
  readonly autoFail: boolean;
  readonly roles: readonly string[];
  readonly timeoutMs: number;
  /** id of the saga (same runner) to run after a FAIL or TIMEOUT outcome */
  readonly onFail: string | undefined;
  readonly start: StartStep;
  readonly steps: ReadonlyMap<string, CompiledStep>;
  /** whether a step is a wait (the saga parks: not served on the stream form), found once here */
  readonly waits: boolean;
  readonly raw: RawSaga;
}

/** A problem in a saga, at a path relative to the saga (`['steps', 3, 'links', 0, 'to']`). */
export interface SagaIssue {
  at: (string | number)[];
  message: string;
  severity: 'error' | 'warning';
}

const TERMINAL: ReadonlySet<StepType> = new Set(['success', 'fail']);
const PLACEHOLDER_RE = /%%|\$\{\{|#\{\{/;

/** Whether a setting holds inject placeholders (then it can only be checked after inject). */
export function hasPlaceholder(text: string): boolean {
  return PLACEHOLDER_RE.test(text);
}

/**
 * Every configuration error (and warning) of one saga: ids, links, reachability, paths,
 * expressions; the expressions it compiles are kept in `expressions` for the plan (compile.ts).
 */
export function checkSaga(saga: RawSaga, expressions: Map<RawStep, Expression>): SagaIssue[] {
  const issues: SagaIssue[] = [];
  const err = (at: (string | number)[], message: string) => issues.push({ at, message, severity: 'error' });
  const warn = (at: (string | number)[], message: string) => issues.push({ at, message, severity: 'warning' });

  const index = new Map<string, number>();
  saga.steps.forEach((step, i) => {
    if (index.has(step.id)) err(['steps', i, 'id'], `duplicate step id "${step.id}"`);
    else index.set(step.id, i);
  });
  const starts = saga.steps.flatMap((s, i) => (s.type === 'start' ? [i] : []));
  if (starts.length === 0) err(['steps'], 'no start step');
  checkTimer(saga.timeout, ['timeout'], err);
  for (const i of starts.slice(1)) err(['steps', i, 'type'], 'more than one start step');

  saga.steps.forEach((step, i) => {
    const links = step.links ?? [];
    links.forEach((link, j) => {
      if (!index.has(link.to))
        err(
          ['steps', i, 'links', j, 'to'],
          `unknown step "${link.to}"${suggestion(link.to, [...index.keys()], 'steps')}`,
        );
    });
    if (TERMINAL.has(step.type) && links.length > 0)
      warn(['steps', i, 'links'], `a ${step.type} step ends the saga; its links are never taken`);
    if (!TERMINAL.has(step.type) && links.length === 0)
      err(['steps', i], `step "${step.id}" has no links: the saga can end nowhere`);
    checkStepSettings(step, i, err, expressions);
  });

  // Reachability from the start step, and whether every reachable step can still end the saga
  // (skipped when a link names an unknown step: that error already says what is wrong).
  const startIndex = starts[0];
  if (startIndex !== undefined && !issues.some((i) => i.severity === 'error')) {
    const reachable = walk(saga, [saga.steps[startIndex]!.id], (s) => (s.links ?? []).map((l) => l.to));
    saga.steps.forEach((step, i) => {
      if (!reachable.has(step.id) && index.get(step.id) === i)
        err(['steps', i], `step "${step.id}" can never be reached from the start`);
    });
    const reverse = new Map<string, string[]>();
    for (const s of saga.steps) for (const l of s.links ?? []) reverse.set(l.to, [...(reverse.get(l.to) ?? []), s.id]);
    const canEnd = walk(
      saga,
      saga.steps.filter((s) => TERMINAL.has(s.type)).map((s) => s.id),
      (s) => reverse.get(s.id) ?? [],
    );
    saga.steps.forEach((step, i) => {
      if (reachable.has(step.id) && !canEnd.has(step.id) && (step.links ?? []).length > 0) {
        err(['steps', i], `from step "${step.id}" no path leads to a success or fail step`);
      }
    });
  }
  return issues;
}

function walk(saga: RawSaga, from: string[], next: (s: RawStep) => string[]): Set<string> {
  const byId = new Map(saga.steps.map((s) => [s.id, s]));
  const seen = new Set<string>();
  const todo = [...from];
  while (todo.length) {
    const id = todo.pop() as string;
    if (seen.has(id)) continue;
    const step = byId.get(id);
    if (!step) continue;
    seen.add(id);
    todo.push(...next(step));
  }
  return seen;
}

/**
 * The event settings of a step with where they are: its `eventMeta`, and its compensation's.
 * Every check of event settings (paths, handlers, streams, systems) goes through this, so that
 * an undo event obeys the same rules as the step's own.
 */
export function eventMetasOf(step: RawStep): { meta: RawEventMeta; at: (string | number)[] }[] {
  const out: { meta: RawEventMeta; at: (string | number)[] }[] = [];
  if (step.notify) out.push({ meta: step.notify.eventMeta, at: ['notify', 'eventMeta'] }); // waits:
  if (step.type !== 'event') return out;
  if (step.eventMeta) out.push({ meta: step.eventMeta, at: ['eventMeta'] });
  if (typeof step.compensate === 'object')
    out.push({ meta: step.compensate.eventMeta, at: ['compensate', 'eventMeta'] });
  return out;
}

function checkStepSettings(
  step: RawStep,
  i: number,
  err: (at: (string | number)[], m: string) => void,
  expressions: Map<RawStep, Expression>,
): void {
  checkUndoSettings(step, i, err);
  checkWaitStep(step, i, err); // waits:
  const tryParse = (text: string | undefined, at: (string | number)[], output: boolean) => {
    if (text === undefined) return;
    try {
      if (output) parseOutputSpec(text);
      else parsePathCached(text);
    } catch (e) {
      err(at, (e as Error).message);
    }
  };
  for (const { meta: m, at } of eventMetasOf(step)) {
    checkTimer(m.timeout, ['steps', i, ...at, 'timeout'], err);
    const injectable = m.inject === true;
    for (const key of ['inputElement', 'outputElement'] as const) {
      const value = m[key];
      if (value === undefined || (injectable && hasPlaceholder(value))) continue;
      if (key === 'inputElement' && value === '-') err(['steps', i, ...at, key], '"-" is only for outputElement');
      else tryParse(value, ['steps', i, ...at, key], key === 'outputElement');
    }
    if (m.parameters) {
      for (const [k, v] of Object.entries(m.parameters)) {
        if (k.startsWith('path_') && typeof v === 'string' && !v.startsWith('@.'))
          tryParse(v, ['steps', i, ...at, 'parameters', k], false);
        if (k.startsWith('path_') && typeof v === 'string' && v.startsWith('@.'))
          tryParse(v.slice(2), ['steps', i, ...at, 'parameters', k], false);
      }
    }
  }
  if (step.type === 'transform' || step.type === 'success') {
    if (step.outputElement !== undefined) {
      if (step.outputElement === '-') err(['steps', i, 'outputElement'], '"-" is only for event steps');
      else tryParse(step.outputElement, ['steps', i, 'outputElement'], true);
    }
  }
  if ((step.type === 'transform' || step.type === 'condition') && step.expression !== undefined) {
    try {
      expressions.set(step, compileExpression(step.expression));
    } catch (e) {
      const je = e as { message?: string; position?: number };
      err(
        ['steps', i, 'expression'],
        `JSONata: ${je.message ?? 'syntax error'}${je.position !== undefined ? ` at ${je.position}` : ''}`,
      );
    }
  }
}

/** The methods of a saga that names none. */
export const DEFAULT_SAGA_METHODS: readonly string[] = ['GET'];

/**
 * Build the frozen plan of a saga that `checkSaga` found without errors, with the expressions
 * it compiled. Every path, duration and expression is parsed by then; the engine reads the plan
 * and never the raw text.
 */
export function planSaga(
  saga: RawSaga,
  defaultTimeoutMs: number,
  expressions: ReadonlyMap<RawStep, Expression>,
): CompiledSaga {
  const steps = new Map<string, CompiledStep>();
  const links = new Map<string, { link: Omit<CompiledLink, 'target'> & { target?: CompiledStep }; order: number }[]>();
  for (const s of saga.steps) {
    const own = (s.links ?? []).map((l, order) => {
      const when = l.when ? new Set(l.when.map(String)) : null;
      return { link: { to: l.to, when, wildcard: when?.has('*') ?? false, priority: l.priority ?? 0 }, order };
    });
    own.sort((a, b) => b.link.priority - a.link.priority || a.order - b.order);
    links.set(s.id, own);
    steps.set(
      s.id,
      planStep(
        s,
        own.map((l) => l.link as CompiledLink),
        expressions.get(s),
      ),
    );
  }
  // Resolve every link to its step, then freeze the graph (links point at frozen steps).
  for (const own of links.values()) {
    for (const { link } of own) {
      link.target = steps.get(link.to);
      Object.freeze(link);
    }
  }
  for (const step of steps.values()) Object.freeze(Object.freeze(step).links);
  const start = steps.get((saga.steps.find((s) => s.type === 'start') as RawStep).id) as StartStep;
  return Object.freeze({
    id: saga.id,
    path: saga.path,
    methods: Object.freeze([...(saga.methods ?? DEFAULT_SAGA_METHODS)]),
    autoFail: saga.autoFail ?? false,
    roles: Object.freeze([...(saga.roles ?? [])]),
    timeoutMs: parseDuration(saga.timeout) ?? defaultTimeoutMs,
    onFail: saga.onFail?.saga,
    start,
    steps,
    waits: saga.steps.some((s) => s.type === 'wait'),
    raw: saga,
  });
}

function planStep(s: RawStep, links: CompiledLink[], expression: Expression | undefined): CompiledStep {
  const base = { id: s.id, autoFail: s.autoFail, links, raw: s };
  const output = s.outputElement === undefined ? undefined : parseOutputSpec(s.outputElement);
  if ((s.type === 'transform' || s.type === 'condition') && expression === undefined)
    throw new SagawayError('CONFIG_INVALID', `step "${s.id}": a ${s.type} step needs an expression`);
  switch (s.type) {
    case 'start':
      return { ...base, type: 'start' };
    case 'event':
      // runs: a compensation that gives up has nothing to hold: the run is already failing
      if (typeof s.compensate === 'object' && s.compensate.retry?.onExhausted === 'suspend')
        throw new SagawayError('CONFIG_INVALID', `step "${s.id}": onExhausted: suspend is for the step's own retry`);
      return {
        ...base,
        type: 'event',
        meta: planEventMeta(s.eventMeta as RawEventMeta),
        retry: s.retry ? planRetry(s.retry) : undefined,
        compensate:
          typeof s.compensate === 'object'
            ? Object.freeze({
                meta: planEventMeta(s.compensate.eventMeta),
                retry: s.compensate.retry ? planRetry(s.compensate.retry) : undefined,
              })
            : undefined,
        pivot: s.pivot === true,
      };
    case 'transform':
      return { ...base, type: 'transform', expression: expression!, output };
    case 'condition':
      return { ...base, type: 'condition', expression: expression! };
    case 'success':
      return { ...base, type: 'success', output, http: s.http ?? 200 };
    case 'fail':
      return { ...base, type: 'fail', error: s.error, compensate: s.compensate !== false };
    case 'wait': // waits:
      return { ...base, type: 'wait', wait: planWait(s, planEventMeta) };
    default:
      // the schema admits no other kind; a hand-made settings object might
      throw new SagawayError('CONFIG_INVALID', `step "${s.id}": unknown type "${String(s.type)}"`);
  }
}

function planEventMeta(raw: RawEventMeta): CompiledEventMeta {
  const input = raw.inputElement ?? null;
  const output = raw.outputElement ?? null;
  const placeholders = (input !== null && hasPlaceholder(input)) || (output !== null && hasPlaceholder(output));
  return Object.freeze({
    raw,
    stream: raw.stream ?? 'local',
    timeoutMs: parseDuration(raw.timeout),
    followAck: raw.followAck === true,
    elements: placeholders ? undefined : Object.freeze({ input, output, parsed: parseElements(input, output) }),
  });
}
