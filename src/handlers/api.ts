import { SagawayError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { Principal, RequestContext } from '../core/types.js';
import type { State } from '../states/state.js';

/**
 * The handler API (DESIGN §6.7): a handler is a name and a table of actions, each implemented
 * in one or more numeric versions. User modules export one by default; built-in handlers are
 * made by factories that also receive the runner's environment (`HandlerEnv`).
 */

const ACK_MARK: unique symbol = Symbol.for('sagaway.ack');

/** An action's answer meaning "accepted, not finished" (status ACK) with an output. */
export interface AckResult {
  readonly [ACK_MARK]: true;
  readonly output: unknown;
}

/** Wrap an output so that the event's status is ACK instead of SUCCESS. */
export function ack(output?: unknown): AckResult {
  return { [ACK_MARK]: true, output };
}

/** Whether an action returned ack(...). */
export function isAck(value: unknown): value is AckResult {
  return typeof value === 'object' && value !== null && (value as Partial<AckResult>)[ACK_MARK] === true;
}

/** What an action receives besides its input. */
export interface ActionContext {
  /** the effective parameters (after overrides and inject) */
  readonly parameters: Record<string, unknown>;
  /** the effective domain, if any */
  readonly domain: string | undefined;
  /** the `@` context: request, user, last error and status */
  readonly request: Readonly<RequestContext>;
  /** the caller (`request.user`): null when the saga runs with no user */
  readonly user: Readonly<Principal> | null;
  /** `<sagaRunId>:<stepId>`: the same for every delivery of one step run */
  readonly idempotencyKey: string;
  /** aborted when the saga times out or the caller goes away */
  readonly signal: AbortSignal;
  /** a logger whose lines are scrubbed of injected secrets */
  readonly log: Logger;
  /** the state named `alias` (DOMAIN_NOT_FOUND when there is none) */
  state(alias: string): State;
  /** answer ACK with an output */
  ack(output?: unknown): AckResult;
  /** fail the step with a code (and HTTP status); never returns */
  fail(code: string, message: string, http?: number): never;
}

/** One version of an action. Return the output, or ack(output); throw to fail. */
export type ActionFn = (input: unknown, ctx: ActionContext) => unknown;

/** A handler: a name and its actions by name, then by version number. */
export interface HandlerDefinition {
  name: string;
  actions: Record<string, Record<number, ActionFn>>;
}

/** Identity function that gives a user handler module its types. */
export function defineHandler<T extends HandlerDefinition>(handler: T): T {
  return handler;
}

/** Throw a coded error from an action (what ctx.fail does). */
export function fail(code: string, message: string, http?: number): never {
  throw new SagawayError(code, message, http === undefined ? {} : { http });
}

/**
 * What a built-in handler factory receives from the runner it is part of: the compiled
 * settings, its states, and the ability to run events and sagas of the same runner.
 */
export interface HandlerEnv {
  readonly settings: import('../config/settings.js').Settings;
  readonly runner: import('../config/settings.js').RunnerSettings;
  readonly log: Logger;
  /** the state of that alias, initialised at runner start (DOMAIN_NOT_FOUND when not configured) */
  state(alias: string): State;
  /**
   * Run an event with these settings on this runner, as an event step would (action.TakeAction).
   * `params` fill the meta's `%%param_<name>%%` slots in the inject pass of the executing runner.
   */
  runEvent(
    meta: import('../core/messages.js').EventMetaSpec,
    payload: Record<string, unknown>,
    parent: ActionContext,
    params?: Record<string, unknown>,
  ): Promise<import('../core/messages.js').EventReply>;
  /** run another saga of this runner by id or path (saga.StartSaga) */
  runSaga(
    target: { saga?: string; path?: string; method?: string },
    input: Record<string, unknown>,
    parent: ActionContext,
  ): Promise<import('../core/types.js').SagaResult>;
}

/** A built-in handler: made per runner from its environment. */
export type HandlerFactory = (env: HandlerEnv) => HandlerDefinition;
