import { SagawayError } from '../core/errors.js';
import type { ActionContext, HandlerFactory } from './api.js';
import type { QueryResult } from '../states/state.js';
import { domainState, objectInput, stringParameter } from './params.js';

/**
 * The `query` handler (DESIGN §6.8): `GetQuery` runs a query declared under
 * `states.<domain>.queries`. The input's keys bind the query's `:name` placeholders; values are
 * always bound by the driver, never written into the SQL.
 */

/** query.GetQuery@0: `{ list: rows }`; QUERY_NOT_FOUND when the state has no such query. */
async function getQuery(input: unknown, ctx: ActionContext): Promise<QueryResult> {
  const name = stringParameter(ctx, 'query');
  if (name === undefined) throw new SagawayError('QUERY_NOT_FOUND', 'query.GetQuery needs parameters.query');
  const bindings = input === undefined || input === null ? {} : objectInput(input, 'query.GetQuery');
  return domainState(ctx, 'query.GetQuery').query(name, bindings);
}

/** The built-in `query` handler. */
export const queryHandler: HandlerFactory = () => ({
  name: 'query',
  actions: {
    GetQuery: { 0: getQuery },
  },
});
