import { SagawayError } from '../core/errors.js';
import { isForbiddenKey, isObject } from '../core/path.js';
import type { RawEventMeta } from '../config/schema.js';
import { eventMetaFields } from '../config/validators.generated.js';
import type { ActionContext, HandlerEnv, HandlerFactory } from './api.js';
import { readSlot } from './action-slot.js';
import type { EventReply } from '../core/messages.js';
import { nested } from './nesting.js';
import { checkIdLength, domainState, objectInput, stringParameter } from './params.js';

/**
 * The `action` handler: predefined action records (DESIGN §6.6 way 1). `TakeAction` reads the
 * record `parameters.action` from a state (the domain, default `actions`) at call time, so a
 * changed record applies to every saga at once. The record's data is an event template; its
 * `%%param_<name>%%` slots are filled from the step's other parameters, and the event runs on
 * this runner (or its stream) with the TakeAction input as its payload.
 *
 * The parameters are caller data (often injected from the request). The slots of the settings
 * that inject resolves (domain, input/output elements, parameters) are therefore NOT filled here:
 * the parameters travel with the event and the executing runner fills them in its one inject
 * pass, where what a slot brings in is never scanned for `#{{SECRET}}` and friends (inject.ts).
 * Filling first and injecting the result resolved secrets named in a request body (issue 9).
 * Only the fields inject never reads (handler, action, version, routing) are filled here.
 */

/**
 * Template fields that are event settings: exactly the properties of a step's `eventMeta`, read
 * from the schema (at build time, see config/write-validators.ts) so the two cannot drift. Other
 * keys of a record (e.g. `description`) are ignored.
 */
const META_FIELDS: readonly string[] = eventMetaFields;

/** The fields whose slots the executing runner's inject pass fills (see injectSettings). */
const INJECTED_FIELDS: ReadonlySet<string> = new Set(['domain', 'inputElement', 'outputElement', 'parameters']);

const PLACEHOLDER = /%%param_([A-Za-z0-9_]+)(?:\|([^%]*))?%%/g;
const WHOLE = /^%%param_([A-Za-z0-9_]+)(?:\|([^%]*))?%%$/;

/**
 * Fill `%%param_<name>%%` (or `%%param_<name>|default%%`) in every string of a template field
 * that inject never reads (handler, action, version, routing), in one pass: text that a parameter brings in is never scanned again. A string that is exactly one
 * placeholder takes the parameter's JSON value (a number stays a number); inside a longer string
 * a non-string value is written as JSON.
 */
export function fillTemplate(value: unknown, params: Record<string, unknown>): unknown {
  if (typeof value === 'string') {
    const whole = WHOLE.exec(value);
    if (whole) return readSlot(whole[1] as string, whole[2], params);
    return value.replace(PLACEHOLDER, (_m, name: string, fallback: string | undefined) => {
      const v = readSlot(name, fallback, params);
      return typeof v === 'string' ? v : JSON.stringify(v);
    });
  }
  if (Array.isArray(value)) return value.map((v) => fillTemplate(v, params));
  if (isObject(value)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) if (!isForbiddenKey(key)) out[key] = fillTemplate(value[key], params);
    return out;
  }
  return value;
}

/**
 * The event settings of a record: slots filled in the fields inject never reads, left as written
 * in the others (for the inject pass); a record that is not an event template fails the step.
 */
function toMeta(id: string, data: unknown, params: Record<string, unknown>): RawEventMeta {
  const bad = (why: string): SagawayError =>
    new SagawayError('VALIDATION_FAILED', `action record "${id}" ${why}`, { http: 500 });
  if (!isObject(data)) throw bad('is not an object');
  const meta: Record<string, unknown> = {};
  for (const field of META_FIELDS) {
    const value = data[field];
    if (value !== undefined) meta[field] = INJECTED_FIELDS.has(field) ? value : fillTemplate(value, params);
  }
  if (typeof meta['version'] === 'string' && /^\d{1,9}$/.test(meta['version']))
    meta['version'] = Number(meta['version']);
  if (typeof meta['action'] !== 'string' || meta['action'] === '') throw bad('needs an "action"');
  if (!Number.isSafeInteger(meta['version']) || (meta['version'] as number) < 0) throw bad('needs a "version" >= 0');
  if (meta['parameters'] !== undefined && !isObject(meta['parameters']))
    throw bad('has "parameters" that are not an object');
  return meta as unknown as RawEventMeta;
}

/** Turn the nested event's reply into this action's answer. */
export function answerWith(reply: EventReply, ctx: ActionContext): unknown {
  if (reply.status === 'SUCCESS') return reply.output;
  if (reply.status === 'ACK') return ctx.ack(reply.output);
  const e = reply.error;
  const code = e?.code ?? (reply.status === 'TIMEOUT' ? 'EVENT_TIMEOUT' : 'ACTION_FAILED');
  throw new SagawayError(
    code,
    e?.message ?? `the event ended ${reply.status}`,
    e?.http === undefined ? {} : { http: e.http },
  );
}

function takeAction(env: HandlerEnv) {
  /** action.TakeAction@0: run the event of record `parameters.action`; its output, ACK or error. */
  return async (input: unknown, ctx: ActionContext): Promise<unknown> => {
    const id = stringParameter(ctx, 'action');
    if (id === undefined) throw new SagawayError('VALIDATION_FAILED', 'action.TakeAction needs parameters.action');
    checkIdLength(id);
    const payload = input === undefined || input === null ? {} : objectInput(input, 'action.TakeAction');
    const record = await domainState(ctx, 'action.TakeAction', 'actions').get(id);
    if (!record) throw new SagawayError('RECORD_NOT_FOUND', 'action record not found');
    const meta = toMeta(id, record.data, ctx.parameters);
    const reply = await nested(`action record "${id}"`, () => env.runEvent(meta, payload, ctx, ctx.parameters));
    return answerWith(reply, ctx);
  };
}

/** The built-in `action` handler. */
export const actionHandler: HandlerFactory = (env) => ({
  name: 'action',
  actions: {
    TakeAction: { 0: takeAction(env) },
  },
});
