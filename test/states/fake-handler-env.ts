import { SagawayError, toErrorInfo } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/logger.js';
import { parsePath, readPath } from '../../src/core/path.js';
import type { SagaResult } from '../../src/core/types.js';
import type { RawEventMeta } from '../../src/config/settings.js';
import { runnerSettingsFor, settingsFor } from '../../src/testing/settings.js';
import {
  ack,
  fail,
  isAck,
  type ActionContext,
  type HandlerDefinition,
  type HandlerEnv,
  type HandlerFactory,
} from '../../src/handlers/api.js';
import { resolveEffectiveSettings } from '../../src/config/effective-settings.js';
import { injectSettings } from '../../src/runner/executor/inject.js';
import type { State } from '../../src/states/state.js';
import type { EventReply } from '../../src/core/messages.js';

/**
 * A small stand-in for the runner around the built-in handlers, for their unit tests: states by
 * alias, and a runEvent that selects handler.action@version among the given handlers, reads the
 * input at inputElement and turns the answer into a reply, as the runner's executor does. The
 * handlers' own logic runs for real over real (memory/SQLite) states.
 */
export interface FakeEnv {
  env: HandlerEnv;
  handlers: Map<string, HandlerDefinition>;
  /** a context as an event step would give it */
  ctx(options?: { parameters?: Record<string, unknown>; domain?: string; key?: string }): ActionContext;
  /** call handler.action@0 as a step would */
  call(handler: string, action: string, input: unknown, options?: Parameters<FakeEnv['ctx']>[0]): Promise<unknown>;
  /** what runSaga was asked, in order */
  sagaCalls: { target: { saga?: string; path?: string; method?: string }; input: Record<string, unknown> }[];
}

/** Build the fake; `sagaResult` answers runSaga. */
export function fakeEnv(
  states: Record<string, State>,
  factories: HandlerFactory[],
  sagaResult: (target: { saga?: string; path?: string }) => SagaResult = () => ({
    outcome: 'SUCCESS',
    http: 200,
    response: {},
  }),
): FakeEnv {
  const handlers = new Map<string, HandlerDefinition>();
  const sagaCalls: FakeEnv['sagaCalls'] = [];
  const state = (alias: string): State => {
    const s = Object.hasOwn(states, alias) ? states[alias] : undefined;
    if (!s) throw new SagawayError('DOMAIN_NOT_FOUND', `no state "${alias}"`);
    return s;
  };
  let seq = 0;
  const ctx: FakeEnv['ctx'] = (o = {}) => ({
    parameters: o.parameters ?? {},
    domain: o.domain,
    request: { request: { method: 'POST', path: '/t', id: 'req-1', query: {} }, user: null },
    user: null,
    idempotencyKey: o.key ?? `run-${++seq}:step`,
    signal: new AbortController().signal,
    log: silentLogger(),
    state,
    ack,
    fail,
  });
  const runAction = async (
    meta: RawEventMeta,
    payload: Record<string, unknown>,
    parent: ActionContext,
    params?: Record<string, unknown>,
  ): Promise<EventReply> => {
    let base = { inputElement: meta.inputElement ?? null, outputElement: meta.outputElement ?? null };
    try {
      if (params !== undefined || meta.inject === true) {
        // the executor's inject pass: it fills an action record's slots (no values, no secrets here)
        const s = injectSettings(resolveEffectiveSettings(meta, undefined, {}), {
          payload,
          context: parent.request,
          values: {},
          secrets: { get: () => undefined },
          params,
        }).settings;
        meta = { ...meta, parameters: s.parameters };
        for (const k of ['domain', 'inputElement', 'outputElement'] as const) if (s[k] !== undefined) meta[k] = s[k];
        base = { inputElement: meta.inputElement ?? null, outputElement: meta.outputElement ?? null };
      }
      const def = handlers.get(meta.handler ?? '');
      if (!def) throw new SagawayError('HANDLER_NOT_FOUND', `no handler ${meta.handler}`);
      const fn = def.actions[meta.action]?.[meta.version];
      if (!fn) throw new SagawayError('ACTION_NOT_FOUND', `no action ${meta.action}@${meta.version}`);
      let input: unknown = payload;
      if (meta.inputElement !== undefined) {
        const p = parsePath(meta.inputElement);
        input = readPath(payload, p.segments);
        if (input === undefined) throw new SagawayError('INPUT_MISSING', `nothing at ${meta.inputElement}`);
      }
      const child: ActionContext = {
        ...ctx({
          parameters: meta.parameters ?? {},
          domain: meta.domain,
          key: `${parent.idempotencyKey}:${meta.handler}.${meta.action}`,
        }),
      };
      const result = await fn(input, child);
      return isAck(result)
        ? { status: 'ACK', output: result.output, ...base }
        : { status: 'SUCCESS', output: result, ...base };
    } catch (err) {
      return { status: 'FAIL', error: toErrorInfo(err, 'ACTION_FAILED'), ...base };
    }
  };
  const env: HandlerEnv = {
    settings: settingsFor(),
    runner: runnerSettingsFor({}, {}, 'test'),
    log: silentLogger(),
    state,
    runEvent: runAction,
    runSaga: async (target, input) => {
      sagaCalls.push({ target, input });
      return sagaResult(target);
    },
  };
  for (const f of factories) {
    const def = f(env);
    handlers.set(def.name, def);
  }
  const call: FakeEnv['call'] = async (handler, action, input, options) => {
    const fn = handlers.get(handler)?.actions[action]?.[0];
    if (!fn) throw new Error(`no ${handler}.${action}`);
    return fn(input, ctx(options));
  };
  return { env, handlers, ctx, call, sagaCalls };
}
