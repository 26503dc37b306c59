import { SagawayError } from '../core/errors.js';
import { isForbiddenKey, isObject } from '../core/path.js';
import type { ActionContext } from './api.js';
import type { State } from '../states/state.js';
import { MAX_ID_LENGTH } from '../states/write-plan.js';

/**
 * Reading the parameters and inputs of the built-in handlers the same way everywhere
 * (DESIGN §6.8): "the id" is `parameters.id` if set, else the input's `id`; numbers written as
 * strings (from a query string, or after inject) are accepted where a number is expected.
 */

function invalid(message: string): SagawayError {
  return new SagawayError('VALIDATION_FAILED', message);
}

/** The state named by the step's domain (or `fallback`); DOMAIN_NOT_FOUND when there is none. */
export function domainState(ctx: ActionContext, what: string, fallback?: string): State {
  const alias = ctx.domain ?? fallback;
  if (alias === undefined || alias === '') {
    throw new SagawayError('DOMAIN_NOT_FOUND', `${what} needs a domain: the alias of a state`);
  }
  return ctx.state(alias);
}

/** An id value as a string, or undefined when it is absent. */
function idValue(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'string') return checkIdLength(value);
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  throw invalid('an id must be a string or an integer');
}

/** An id of at most MAX_ID_LENGTH characters (it is echoed in error messages). */
export function checkIdLength(id: string): string {
  if (id.length > MAX_ID_LENGTH) throw invalid(`an id must be at most ${MAX_ID_LENGTH} characters`);
  return id;
}

/** `parameters.id`, else the input's `id`; undefined when neither is set. */
export function optionalId(ctx: ActionContext, input: unknown): string | undefined {
  return idValue(ctx.parameters['id']) ?? (isObject(input) ? idValue(input['id']) : undefined);
}

/** `parameters.id`, else the input's `id`; VALIDATION_FAILED when neither is set. */
export function requiredId(ctx: ActionContext, input: unknown, what: string): string {
  const id = optionalId(ctx, input);
  if (id === undefined) throw invalid(`${what} needs an id: parameters.id or an "id" in the input`);
  return id;
}

/** An optional non-negative integer parameter (a number or a string of digits). */
export function intParameter(ctx: ActionContext, name: string): number | undefined {
  const value = ctx.parameters[name];
  if (value === undefined || value === null || value === '') return undefined;
  const n = typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
    throw invalid(`parameter "${name}" must be a non-negative integer`);
  }
  return n;
}

/** An optional string parameter. */
export function stringParameter(ctx: ActionContext, name: string): string | undefined {
  const value = ctx.parameters[name];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw invalid(`parameter "${name}" must be a string`);
  return value;
}

/** The input as an object; VALIDATION_FAILED for anything else. */
export function objectInput(input: unknown, what: string): Record<string, unknown> {
  if (!isObject(input)) throw invalid(`${what} needs an object as its input`);
  return input;
}

/**
 * Record data from an input: a shallow copy without `id` (it names the record, it is not part
 * of its data) and without keys that would reach a prototype.
 */
export function recordData(input: unknown, what: string): Record<string, unknown> {
  const source = objectInput(input, what);
  const data: Record<string, unknown> = {};
  for (const key of Object.keys(source)) {
    if (key === 'id' || isForbiddenKey(key)) continue;
    data[key] = source[key];
  }
  return data;
}
