import { randomUUID } from 'node:crypto';
import type { ActionContext, HandlerFactory } from './api.js';
import type { StateRecord, WriteOptions } from '../states/state.js';
import { domainState, intParameter, optionalId, recordData, requiredId } from './params.js';

/**
 * The `write` handler (DESIGN §6.8). Every write passes the step's idempotency key
 * (`<sagaRunId>:<stepId>`) to the state, so a step that runs twice (a redelivered event, a
 * retried runner) has one effect and answers the first result both times. `parameters.version`
 * is the expected version (STALE_VERSION when the record has moved on).
 */

function options(ctx: ActionContext): WriteOptions {
  const expectedVersion = intParameter(ctx, 'version');
  return expectedVersion === undefined
    ? { idempotencyKey: ctx.idempotencyKey }
    : { idempotencyKey: ctx.idempotencyKey, expectedVersion };
}

/** write.Create@0: a new record (version 1); its id from parameters, the input, or generated. */
async function create(input: unknown, ctx: ActionContext): Promise<StateRecord> {
  const data = recordData(input, 'write.Create');
  const id = optionalId(ctx, input) ?? randomUUID();
  return domainState(ctx, 'write.Create').create(id, data, options(ctx));
}

/** write.Update@0: merge the input (a patch) into the record's data. */
async function update(input: unknown, ctx: ActionContext): Promise<StateRecord> {
  const id = requiredId(ctx, input, 'write.Update');
  return domainState(ctx, 'write.Update').update(id, recordData(input, 'write.Update'), options(ctx));
}

/** write.Set@0: replace the data of an existing record. */
async function set(input: unknown, ctx: ActionContext): Promise<StateRecord> {
  const id = requiredId(ctx, input, 'write.Set');
  return domainState(ctx, 'write.Set').set(id, recordData(input, 'write.Set'), options(ctx));
}

/** write.Upsert@0: replace the data, creating the record when it does not exist. */
async function upsert(input: unknown, ctx: ActionContext): Promise<StateRecord> {
  const id = requiredId(ctx, input, 'write.Upsert');
  return domainState(ctx, 'write.Upsert').upsert(id, recordData(input, 'write.Upsert'), options(ctx));
}

/** write.Delete@0: `{ id, deleted: true }`. */
async function remove(input: unknown, ctx: ActionContext): Promise<{ id: string; deleted: true }> {
  const id = requiredId(ctx, input, 'write.Delete');
  await domainState(ctx, 'write.Delete').delete(id, options(ctx));
  return { id, deleted: true };
}

/** The built-in `write` handler. */
export const writeHandler: HandlerFactory = () => ({
  name: 'write',
  actions: {
    Create: { 0: create },
    Update: { 0: update },
    Set: { 0: set },
    Upsert: { 0: upsert },
    Delete: { 0: remove },
  },
});
