import type { RunnerSettings, StreamBindingSettings } from '../../config/settings.js';
import { Cancel, type Cancellable } from '../../core/cancel.js';
import { SagawayError, toErrorInfo, type ErrorInfo } from '../../core/errors.js';
import { jsonCopy } from '../../core/json-copy.js';
import type { Logger } from '../../core/logger.js';
import { parsePathCached, readPath } from '../../core/path.js';
import type { Lineage } from '../../core/lineage.js';
import type { Principal, RequestContext } from '../../core/types.js';
import { parseOutputSpec } from '../../saga/payload.js';
import type { State } from '../../states/state.js';
import type { EventMessage, EventReply } from '../../core/messages.js';
import { effectiveSettingsFor, type EffectiveSettings } from '../../config/effective-settings.js';
import { ack, fail, isAck, type ActionContext, type AckResult } from '../../handlers/api.js';
import { injectSettings } from './inject.js';
import type { HandlerRegistry } from './registry.js';
import { scrubText, scrubValue, type SecretSource } from './secrets.js';
import { scrubbingLogger } from './scrub-logger.js';

/** What the executing runner needs to run events. */
export interface ExecutorDeps {
  runner: RunnerSettings;
  registry: HandlerRegistry;
  values: Readonly<Record<string, string>>;
  secrets: SecretSource;
  log: Logger;
  state(alias: string): State;
}

/**
 * Run one event on this runner (DESIGN §6.3): effective settings (§6.6), inject (§6.4), select
 * handler.action@version, read the input, call the action, and answer a reply. The reply never
 * throws: every failure becomes a FAIL reply with a coded error, scrubbed of injected secrets.
 */
export function executeEvent(
  deps: ExecutorDeps,
  event: EventMessage,
  binding: StreamBindingSettings | undefined,
  cancel: Cancellable,
): Promise<EventReply> {
  return Promise.resolve(executeNow(deps, event, binding, cancel));
}

/**
 * executeEvent, with the reply itself when the action answered at once (no promise, no
 * microtask: a local step of the saga engine goes on in the same tick, issue 23).
 */
export function executeNow(
  deps: ExecutorDeps,
  event: EventMessage,
  binding: StreamBindingSettings | undefined,
  cancel: Cancellable,
): EventReply | Promise<EventReply> {
  let settings: EffectiveSettings | undefined;
  let secretsUsed: string[] = [];
  try {
    settings = effectiveSettingsFor(event.meta, binding, deps.runner.actions);
    // An action record's slots are filled in the inject pass, never before it (see inject.ts).
    if (settings.inject || event.params !== undefined) {
      const injected = injectSettings(settings, {
        payload: event.payload,
        context: event.context,
        values: deps.values,
        secrets: deps.secrets,
        params: event.params,
      });
      settings = injected.settings;
      secretsUsed = injected.secretsUsed;
    }
    if (settings.handler === undefined) {
      throw new SagawayError(
        'HANDLER_REQUIRED',
        `event "${settings.action}" names no handler and its stream binds none`,
      );
    }
    const fn = deps.registry.resolve(settings.handler, settings.action, settings.version);
    if (settings.outputElement !== undefined) parseOutputSpec(settings.outputElement);
    const input = readInput(event, settings.inputElement);
    const ctx = new Context(deps, event, settings, cancel, secretsUsed);
    const result = fn(input, ctx);
    if (isThenable(result)) return settled(deps, event, abortable(result, cancel), settings, secretsUsed, cancel);
    return answered(result, settings, secretsUsed);
  } catch (err) {
    return failedReply(deps, event, err, cancel, settings, secretsUsed);
  }
}

/** The reply of an action that answered through a promise. */
async function settled(
  deps: ExecutorDeps,
  event: EventMessage,
  pending: Promise<unknown>,
  settings: EffectiveSettings,
  secretsUsed: string[],
  cancel: Cancellable,
): Promise<EventReply> {
  try {
    return answered(await pending, settings, secretsUsed);
  } catch (err) {
    return failedReply(deps, event, err, cancel, settings, secretsUsed);
  }
}

/** The reply of an action's result: ACK or SUCCESS, its output copied as a message. */
function answered(result: unknown, settings: EffectiveSettings, secretsUsed: string[]): EventReply {
  const acked = isAck(result);
  const output = asMessage(acked ? (result as AckResult).output : result);
  return reply(acked ? 'ACK' : 'SUCCESS', settings, { output: scrubValue(output, secretsUsed) });
}

/** The reply of a failed event (logged unless the failure is one of ours). */
function failedReply(
  deps: ExecutorDeps,
  event: EventMessage,
  err: unknown,
  cancel: Cancellable,
  settings: EffectiveSettings | undefined,
  secretsUsed: string[],
): EventReply {
  const info = scrubError(errorOf(err, cancel), secretsUsed);
  if (!(err instanceof SagawayError)) {
    deps.log.warn(
      {
        step: event.stepId,
        runId: event.runId,
        code: info.code,
        err: scrubText(String((err as Error)?.stack ?? err), secretsUsed),
      },
      'action failed',
    );
  }
  const status = info.code === 'EVENT_TIMEOUT' ? 'TIMEOUT' : 'FAIL';
  return reply(status, settings, { error: info });
}

/** A reply of one shape (a spread of a partial reply cost more than the rest of the call). */
function reply(
  status: EventReply['status'],
  settings: EffectiveSettings | undefined,
  part: { output?: unknown; error?: ErrorInfo },
): EventReply {
  const r: EventReply = {
    status,
    inputElement: settings?.inputElement ?? null,
    outputElement: settings?.outputElement ?? null,
  };
  if ('output' in part) r.output = part.output;
  if (part.error !== undefined) r.error = part.error;
  return r;
}

function readInput(event: EventMessage, inputElement: string | undefined): unknown {
  if (inputElement === undefined || inputElement === '$') return event.payload;
  const value = readPath(event.payload, parsePathCached(inputElement).segments);
  if (value === undefined) throw new SagawayError('INPUT_MISSING', `nothing at inputElement "${inputElement}"`);
  return value;
}

function errorOf(err: unknown, cancel: Cancellable): ErrorInfo {
  if (err === ABORTED || (cancel.aborted && !(err instanceof SagawayError))) {
    return { code: 'EVENT_TIMEOUT', message: 'the event was cancelled before the action finished', http: 504 };
  }
  return toErrorInfo(err, 'ACTION_FAILED');
}

function scrubError(info: ErrorInfo, secrets: readonly string[]): ErrorInfo {
  return secrets.length === 0 ? info : { ...info, message: scrubText(info.message, secrets) };
}

/**
 * A reply is a message: the output is copied with JSON semantics, exactly as if it had crossed
 * NATS. An in-process action that returns (part of) its input therefore cannot alias the payload
 * or make it circular, and an output that is not JSON data fails here rather than at the client.
 */
function asMessage(output: unknown): unknown {
  if (output === null || typeof output !== 'object') return output;
  try {
    return jsonCopy(output);
  } catch {
    throw new SagawayError('ACTION_FAILED', 'the action returned an output that is not JSON data');
  }
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function';
}

const ABORTED = Symbol('aborted');

/** Await `p`, but give up as soon as `cancel` aborts (the action keeps its signal to stop itself). */
export function abortable<T>(p: PromiseLike<T>, cancel: Cancellable): Promise<T> {
  if (cancel.aborted) return Promise.reject(ABORTED);
  return new Promise<T>((resolve, reject) => {
    const unlink = cancel.onAbort(() => reject(ABORTED));
    p.then(
      (v) => {
        unlink();
        resolve(v);
      },
      (e: unknown) => {
        unlink();
        reject(e);
      },
    );
  });
}

/** The cancellation behind an action's context (a nested event or saga follows it). */
export function cancelOf(ctx: ActionContext): Cancellable {
  return ctx instanceof Context ? ctx.cancel : Cancel.fromSignal(ctx.signal);
}

/**
 * Where a run that an action starts (saga.StartSaga) comes from: its derived run id and the
 * lineage of the event (core/lineage.ts). The id is the event's idempotency key with its first
 * `:` made a `.`: `<runId>.<stepId>`, `<runId>.<stepId>#2` on a step's second visit, the same on
 * every try and redelivery of one visit, so the nested run's own keys are stable and its logs
 * can be followed from the run that started it. undefined for a context this module did not make.
 */
export function parentRunOf(ctx: ActionContext): { runId: string; lineage: Lineage | undefined } | undefined {
  if (!(ctx instanceof Context)) return undefined;
  const { runId, idempotencyKey: key, stepId, lineage } = ctx.event;
  const derived = key.startsWith(`${runId}:`) ? `${runId}.${key.slice(runId.length + 1)}` : `${runId}.${stepId}`;
  return { runId: derived, lineage };
}

/** The `ctx` an action receives. A class so that a call allocates one object, not a dozen closures. */
class Context implements ActionContext {
  private logger: Logger | undefined;
  constructor(
    private readonly deps: ExecutorDeps,
    readonly event: EventMessage,
    private readonly settings: EffectiveSettings,
    readonly cancel: Cancellable,
    private readonly secretsUsed: string[],
  ) {}
  /** made on first use: most actions never look at it (core/cancel.ts) */
  get signal(): AbortSignal {
    return this.cancel.signal;
  }
  get parameters(): Record<string, unknown> {
    return this.settings.parameters;
  }
  get domain(): string | undefined {
    return this.settings.domain;
  }
  get request(): Readonly<RequestContext> {
    return this.event.context;
  }
  get user(): Readonly<Principal> | null {
    return this.event.context.user;
  }
  get idempotencyKey(): string {
    return this.event.idempotencyKey;
  }
  get log(): Logger {
    if (!this.logger) {
      const child = this.deps.log.child({
        step: this.event.stepId,
        runId: this.event.runId,
        action: this.settings.action,
      });
      this.logger = this.secretsUsed.length ? scrubbingLogger(child, this.secretsUsed) : child;
    }
    return this.logger;
  }
  state(alias: string): State {
    return this.deps.state(alias);
  }
  ack(output?: unknown): AckResult {
    return ack(output);
  }
  fail(code: string, message: string, http?: number): never {
    return fail(code, message, http);
  }
}
