import type { RawEventMeta, RawSaga, RawStep } from '../config/schema.js';
import { SagawayError } from '../core/errors.js';
import { parsePath, parsePathCached, type PayloadPath } from '../core/path.js';
import { parseDuration } from '../core/units.js';
import { compileExpression, type Expression } from './expression.js';

/**
 * A saga compiled for running: steps by id, links sorted by priority, expressions compiled and
 * paths parsed. `checkSaga` finds every configuration error of a saga with its location.
 */

export type StepType = RawStep['type'];

/** A link with its `when` values as strings (YAML `true` and "true" are the same). */
export interface CompiledLink {
  to: string;
  /** values this link is taken for; null = no `when` (taken after success) */
  when: ReadonlySet<string> | null;
  /** `"*"` is one of its values: taken when no other link matches */
  wildcard: boolean;
  priority: number;
}

/** An outputElement: a path, `$` (replace the payload) or `-` (discard). */
export type OutputSpec = { kind: 'path'; path: PayloadPath } | { kind: 'root' } | { kind: 'discard' };

export interface CompiledStep {
  id: string;
  type: StepType;
  autoFail: boolean | undefined;
  /** sorted: highest priority first, then the order written */
  links: readonly CompiledLink[];
  expression?: Expression;
  /** transform / success: where the result goes or what the response is */
  output?: OutputSpec;
  http?: number;
  error?: { code?: string; message?: string; http?: number };
  eventMeta?: RawEventMeta;
}

export interface CompiledSaga {
  id: string;
  path: string;
  methods: readonly string[];
  autoFail: boolean;
  roles: readonly string[];
  timeoutMs: number;
  start: CompiledStep;
  steps: ReadonlyMap<string, CompiledStep>;
  raw: RawSaga;
}

/** A problem in a saga, at a path relative to the saga (`['steps', 3, 'links', 0, 'to']`). */
export interface SagaIssue {
  at: (string | number)[];
  message: string;
  severity: 'error' | 'warning';
}

const TERMINAL: ReadonlySet<StepType> = new Set(['success', 'fail']);
const PLACEHOLDER_RE = /%%|\$\{\{|#\{\{/;

/** Parse an outputElement value. */
export function parseOutputSpec(text: string): OutputSpec {
  if (text === '-') return { kind: 'discard' };
  if (text === '$') return { kind: 'root' };
  return { kind: 'path', path: parsePathCached(text) };
}

/** Whether a setting holds inject placeholders (then it can only be checked after inject). */
export function hasPlaceholder(text: string): boolean {
  return PLACEHOLDER_RE.test(text);
}

/** Every configuration error (and warning) of one saga: ids, links, reachability, paths, expressions. */
export function checkSaga(saga: RawSaga): SagaIssue[] {
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
  for (const i of starts.slice(1)) err(['steps', i, 'type'], 'more than one start step');

  saga.steps.forEach((step, i) => {
    const links = step.links ?? [];
    links.forEach((link, j) => {
      if (!index.has(link.to)) err(['steps', i, 'links', j, 'to'], `unknown step "${link.to}"`);
    });
    if (TERMINAL.has(step.type) && links.length > 0)
      warn(['steps', i, 'links'], `a ${step.type} step ends the saga; its links are never taken`);
    if (!TERMINAL.has(step.type) && links.length === 0)
      err(['steps', i], `step "${step.id}" has no links: the saga can end nowhere`);
    checkStepSettings(step, i, err);
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

function checkStepSettings(step: RawStep, i: number, err: (at: (string | number)[], m: string) => void): void {
  const tryParse = (text: string | undefined, at: (string | number)[], output: boolean) => {
    if (text === undefined) return;
    try {
      if (output) parseOutputSpec(text);
      else parsePath(text);
    } catch (e) {
      err(at, (e as Error).message);
    }
  };
  if (step.type === 'event' && step.eventMeta) {
    const m = step.eventMeta;
    const injectable = m.inject === true;
    for (const key of ['inputElement', 'outputElement'] as const) {
      const value = m[key];
      if (value === undefined || (injectable && hasPlaceholder(value))) continue;
      if (key === 'inputElement' && value === '-') err(['steps', i, 'eventMeta', key], '"-" is only for outputElement');
      else tryParse(value, ['steps', i, 'eventMeta', key], key === 'outputElement');
    }
    if (m.parameters) {
      for (const [k, v] of Object.entries(m.parameters)) {
        if (k.startsWith('path_') && typeof v === 'string' && !v.startsWith('@.'))
          tryParse(v, ['steps', i, 'eventMeta', 'parameters', k], false);
        if (k.startsWith('path_') && typeof v === 'string' && v.startsWith('@.'))
          tryParse(v.slice(2), ['steps', i, 'eventMeta', 'parameters', k], false);
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
      compileExpression(step.expression);
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

/** Compile a checked saga. Throws CONFIG_INVALID if `checkSaga` would report an error. */
export function compileSaga(saga: RawSaga, defaultTimeoutMs: number): CompiledSaga {
  const errors = checkSaga(saga).filter((i) => i.severity === 'error');
  if (errors.length > 0) {
    throw new SagawayError(
      'CONFIG_INVALID',
      `saga "${saga.id}": ${errors.map((e) => `${e.at.join('.')}: ${e.message}`).join('; ')}`,
    );
  }
  const steps = new Map<string, CompiledStep>();
  for (const s of saga.steps) {
    const links = (s.links ?? []).map((l, order) => {
      const when = l.when ? new Set(l.when.map(String)) : null;
      return { link: { to: l.to, when, wildcard: when?.has('*') ?? false, priority: l.priority ?? 0 }, order };
    });
    links.sort((a, b) => b.link.priority - a.link.priority || a.order - b.order);
    const step: CompiledStep = { id: s.id, type: s.type, autoFail: s.autoFail, links: links.map((l) => l.link) };
    if (s.expression !== undefined) step.expression = compileExpression(s.expression);
    if (s.outputElement !== undefined) step.output = parseOutputSpec(s.outputElement);
    if (s.http !== undefined) step.http = s.http;
    if (s.error !== undefined) step.error = s.error;
    if (s.eventMeta !== undefined) step.eventMeta = s.eventMeta;
    steps.set(s.id, step);
  }
  const start = saga.steps.find((s) => s.type === 'start') as RawStep;
  return {
    id: saga.id,
    path: saga.path,
    methods: saga.methods ?? DEFAULT_SAGA_METHODS,
    autoFail: saga.autoFail ?? false,
    roles: saga.roles ?? [],
    timeoutMs: parseDuration(saga.timeout) ?? defaultTimeoutMs,
    start: steps.get(start.id) as CompiledStep,
    steps,
    raw: saga,
  };
}

/**
 * Pick the link to follow (DESIGN §4.2, §4.3). `value` is the step's condition value; links
 * without `when` count only when the step did not fail; `"*"` links only when nothing else matches.
 * Links are pre-sorted, so the first match is the winner.
 */
export function selectLink(step: CompiledStep, value: string, failed: boolean): CompiledLink | undefined {
  let wildcard: CompiledLink | undefined;
  for (const link of step.links) {
    if (link.when === null) {
      if (!failed) return link;
    } else if (link.when.has(value) && value !== '*') {
      return link;
    } else if (link.wildcard && wildcard === undefined) {
      wildcard = link;
    }
  }
  return wildcard;
}
