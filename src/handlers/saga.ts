import { SagawayError } from '../core/errors.js';
import type { ActionContext, HandlerEnv, HandlerFactory } from './api.js';
import { nested } from './nesting.js';
import { objectInput, stringParameter } from './params.js';

/**
 * The `saga` handler: `StartSaga` runs another saga of the same runner, picked by
 * `parameters.saga` (its id) or `parameters.path` (with `parameters.method`, default the calling
 * request's method), with the step's input as the nested saga's INPUT. The runner checks the
 * nested saga's roles against the caller (HandlerEnv.runSaga). Its response is the output; its ACK
 * is this step's ACK; its failure is this step's failure with the same code, message and HTTP status.
 */

function startSaga(env: HandlerEnv) {
  /** saga.StartSaga@0: the nested saga's response. */
  return async (input: unknown, ctx: ActionContext): Promise<unknown> => {
    const saga = stringParameter(ctx, 'saga');
    const path = stringParameter(ctx, 'path');
    const method = stringParameter(ctx, 'method');
    if (saga === undefined && path === undefined) {
      throw new SagawayError('VALIDATION_FAILED', 'saga.StartSaga needs parameters.saga or parameters.path');
    }
    const body = input === undefined || input === null ? {} : objectInput(input, 'saga.StartSaga');
    const target = {
      ...(saga !== undefined ? { saga } : {}),
      ...(path !== undefined ? { path } : {}),
      ...(method ? { method: method.toUpperCase() } : {}),
    };
    const result = await nested(`saga ${saga ?? path}`, () => env.runSaga(target, body, ctx));
    if (result.outcome === 'SUCCESS') return result.response;
    if (result.outcome === 'ACK') return ctx.ack(result.response);
    const e = result.error;
    const code = e?.code ?? (result.outcome === 'TIMEOUT' ? 'SAGA_TIMEOUT' : 'SAGA_FAILED');
    throw new SagawayError(code, e?.message ?? `the nested saga ended ${result.outcome}`, {
      http: e?.http ?? result.http,
    });
  };
}

/** The built-in `saga` handler. */
export const sagaHandler: HandlerFactory = (env) => ({
  name: 'saga',
  actions: {
    StartSaga: { 0: startSaga(env) },
  },
});
