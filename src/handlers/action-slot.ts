import { SagawayError } from '../core/errors.js';

/**
 * The value of an action record's `%%param_<name>%%` slot, shared by the action handler (the
 * fields it fills itself) and the executing runner's inject pass (the rest, runner/executor/inject.ts).
 */

/** An action record slot: the TakeAction step's parameter `name`, else the default (500: a record's fault). */
export function readSlot(
  name: string,
  fallback: string | undefined,
  params: Readonly<Record<string, unknown>>,
): unknown {
  if (name !== 'action' && Object.hasOwn(params, name) && params[name] !== undefined) return params[name];
  if (fallback !== undefined) return fallback;
  throw new SagawayError('INJECT_UNRESOLVED', `action record placeholder %%param_${name}%% has no parameter "${name}"`);
}
