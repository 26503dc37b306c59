import { SagawayError } from '../core/errors.js';
import { isObject } from '../core/path.js';
import type { ActionContext, HandlerFactory } from './api.js';
import type { ListPage, StateRecord } from '../states/state.js';
import { domainState, intParameter, requiredId, stringParameter } from './params.js';

/**
 * The `read` handler (DESIGN §6.8): `Get` one record, `GetList` one page of records. The domain
 * is the alias of a state.
 */

/** read.Get@0: the record whose id is `parameters.id` or the input's `id`; RECORD_NOT_FOUND. */
async function get(input: unknown, ctx: ActionContext): Promise<StateRecord> {
  const id = requiredId(ctx, input, 'read.Get');
  const record = await domainState(ctx, 'read.Get').get(id);
  if (!record) throw new SagawayError('RECORD_NOT_FOUND', 'record not found');
  return record;
}

/**
 * read.GetList@0: `{ list, next? }`. `previous` (the input's, else `parameters.previous`) is a
 * `next` returned earlier: the page continues after it, which is what a stream's polls send.
 */
async function getList(input: unknown, ctx: ActionContext): Promise<ListPage> {
  const p = ctx.parameters;
  const fromInput = isObject(input) ? input['previous'] : undefined;
  const previous = fromInput === undefined || fromInput === null || fromInput === '' ? p['previous'] : fromInput;
  if (previous !== undefined && previous !== null && typeof previous !== 'string') {
    throw new SagawayError('INVALID_CURSOR', 'previous must be a cursor returned as next');
  }
  const filter = p['filter'];
  if (filter !== undefined && !isObject(filter)) {
    throw new SagawayError('VALIDATION_FAILED', 'parameter "filter" must be an object');
  }
  return domainState(ctx, 'read.GetList').list({
    ...(filter ? { filter } : {}),
    sort: stringParameter(ctx, 'sort'),
    limit: intParameter(ctx, 'limit'),
    skip: intParameter(ctx, 'skip'),
    after: previous ?? undefined,
    follow: p['follow'] === true,
  });
}

/** The built-in `read` handler. */
export const readHandler: HandlerFactory = () => ({
  name: 'read',
  actions: {
    Get: { 0: get },
    GetList: { 0: getList },
  },
});
