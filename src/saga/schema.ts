import { Type, type Static } from '@sinclair/typebox';
import {
  ConditionValue,
  DurationOf,
  DurationSchema,
  HttpMethod,
  HttpStatus,
  NameOf,
  strict,
} from '../core/schema-kit.js';
import type { EventMetaSpec } from '../core/messages.js';
import type { JsonSchema } from '../core/json-schema.js';
import { waitFields } from './wait-schema.js'; // waits:

/**
 * The saga format (DESIGN §4, §6.1): sagas, steps, links and event settings. It lives with the
 * engine, which compiles it; config/schema.ts places it in the whole configuration file.
 */

export const LinkSchema = Type.Object(
  {
    to: NameOf('id of the step this link leads to'),
    when: Type.Optional(Type.Array(ConditionValue, { minItems: 1, description: 'condition values; "*" = otherwise' })),
    priority: Type.Optional(Type.Integer({ description: 'highest wins when several links match; default 0' })),
  },
  strict,
);

export const EventMetaSchema = Type.Object(
  {
    handler: Type.Optional(
      NameOf(
        "the handler: a built-in (read, write, query, rest, action, task, saga) or a module's name; required on the local stream",
      ),
    ),
    action: NameOf('the action of the handler, or a preconfigured action of the target runner'),
    version: Type.Integer({ minimum: 0, description: '0 = unversioned' }),
    domain: Type.Optional(
      Type.String({ maxLength: 256, description: 'alias of a state, query set or system; ctx.domain of the action' }),
    ),
    inputElement: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description: "path of the action's input in the payload (parameters.order); absent = the whole payload",
      }),
    ),
    outputElement: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description:
          'where the output goes: relative to inputElement, $.a.b from the root, $ = replace the payload, - = discard; absent = replaces the input',
      }),
    ),
    parameters: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: 'handler- and action-specific settings; ctx.parameters',
      }),
    ),
    stream: Type.Optional(
      NameOf('the event stream that carries the event: local (default, this process) or a named stream'),
    ),
    system: Type.Optional(NameOf('system of that event stream; default defaultSystem, else local')),
    deployments: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        minItems: 1,
        description: 'deployment ids of the target runner allowed to run the event',
      }),
    ),
    inject: Type.Optional(
      Type.Boolean({ description: 'resolve %%path%%, ${{VALUE}} and #{{SECRET}} placeholders; default false' }),
    ),
    followAck: Type.Optional(
      Type.Boolean({ description: 'an ACK status continues the saga instead of ending it; default false' }),
    ),
    responseSystem: Type.Optional(NameOf('system of the reply, when not the default reply route')),
    responseStream: Type.Optional(NameOf('stream of the reply, when not the default reply route')),
    timeout: Type.Optional(DurationSchema),
  },
  { ...strict, description: 'event step: handler, action, version and its arguments' },
);

export const RetrySchema = Type.Object(
  {
    attempts: Type.Integer({
      minimum: 1,
      maximum: 100,
      description: 'tries in all, the first included (1 = no retry)',
    }),
    backoff: Type.Optional(DurationOf('delay before the second try; doubles before each later one; default 100ms')),
    maxBackoff: Type.Optional(DurationOf('the longest delay between two tries; default 10s')),
    jitter: Type.Optional(
      Type.Boolean({ description: 'full jitter: each delay is random between 0 and its computed value; default true' }),
    ),
    on: Type.Optional(
      Type.Array(Type.String({ pattern: '^[A-Z][A-Z0-9_]{1,63}$' }), {
        minItems: 1,
        maxItems: 64,
        description:
          'statuses (FAIL, TIMEOUT) and error codes that are retried; default the codes docs/errors.md marks retryable',
      }),
    ),
    onExhausted: Type.Optional(
      Type.Union([Type.Literal('fail'), Type.Literal('suspend')], {
        description:
          'event step, once its tries are over and it still failed: fail (default: the failure is routed as usual) or suspend (a journaled run is parked SUSPENDED, its compensations not run, until POST /api/runs/<runId>/redrive or /abort: docs/runs.md)',
      }),
    ),
  },
  {
    ...strict,
    description: 'event step: try again with exponential backoff; every try of one visit has the same idempotency key',
  },
);

export const CompensateSchema = Type.Object(
  {
    eventMeta: EventMetaSchema,
    retry: Type.Optional(RetrySchema),
  },
  {
    ...strict,
    description:
      'event step: the event that undoes it, run when the saga ends FAIL (its input is read from the payload as it was when the step succeeded)',
  },
);

export const ErrorSpecSchema = Type.Object(
  {
    code: Type.Optional(
      Type.String({ pattern: '^[A-Z][A-Z0-9_]{1,63}$', description: 'the error code clients see (UPPER_CASE)' }),
    ),
    message: Type.Optional(Type.String({ maxLength: 1024, description: "the problem's detail" })),
    http: Type.Optional(HttpStatus("the HTTP status; default 500, or the earlier step error's")),
  },
  { ...strict, description: 'fail: the error { code, message, http }; default the last step error' },
);

const StepType = Type.Union(
  [
    Type.Literal('start'),
    Type.Literal('event'),
    Type.Literal('transform'),
    Type.Literal('condition'),
    Type.Literal('success'),
    Type.Literal('fail'),
    Type.Literal('wait'), // waits:
  ],
  { description: 'one of start, event, transform, condition, success, fail, wait' },
);

export const StepSchema = Type.Object(
  {
    id: NameOf("the step's id, unique in the saga; links name it"),
    type: StepType,
    name: Type.Optional(Type.String({ description: 'a display name (graphs)' })),
    description: Type.Optional(Type.String({ description: 'free text' })),
    stroke: Type.Optional(Type.String({ description: 'outline colour in graphs' })),
    fill: Type.Optional(Type.String({ description: 'fill colour in graphs' })),
    autoFail: Type.Optional(
      Type.Boolean({ description: "a failure of this step ends the saga FAIL; default the saga's autoFail" }),
    ),
    links: Type.Optional(Type.Array(LinkSchema, { description: 'where to go next: { to, when?, priority? }' })),
    eventMeta: Type.Optional(EventMetaSchema),
    expression: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 65536,
        description: 'JSONata over the payload ($request, $user, $error, $status bound): transform and condition steps',
      }),
    ),
    outputElement: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description:
          'transform: where the result goes (absent = replaces the payload); success: the part that is the response',
      }),
    ),
    http: Type.Optional(HttpStatus('success: the HTTP status, e.g. 201; default 200')),
    error: Type.Optional(ErrorSpecSchema),
    compensate: Type.Optional(
      Type.Union([CompensateSchema, Type.Literal(false)], {
        description:
          'event step: { eventMeta, retry? }, the event that undoes it; fail step: false skips the undoing on this path',
      }),
    ),
    pivot: Type.Optional(
      Type.Boolean({
        description:
          'event step: once it succeeds the saga can no longer be undone (earlier compensations are dropped); default false',
      }),
    ),
    retry: Type.Optional(RetrySchema),
    idempotent: Type.Optional(
      Type.Boolean({
        description:
          'event step: its action has one effect per idempotency key (it dedupes on the key), so a redrive may run it again safely; a dry run flags the others (docs/runs.md); default false',
      }),
    ),
    ...waitFields(EventMetaSchema), // waits: for, until, signal, approvals, timeout, notify
  },
  {
    ...strict,
    // Each kind requires its own settings; ajv reports the missing one at the step's path.
    allOf: [
      { if: { properties: { type: { const: 'event' } } }, then: { required: ['eventMeta'] } },
      { if: { properties: { type: { enum: ['transform', 'condition'] } } }, then: { required: ['expression'] } },
    ],
  },
);

/** A saga's input or output schema: checked as a JSON Schema when the configuration is loaded (config/io-schemas.ts). */
const IoSchema = (description: string) => Type.Unsafe<JsonSchema>({ type: ['object', 'boolean'], description });

export const SagaSchema = Type.Object(
  {
    id: NameOf("the saga's id, unique in its runner"),
    path: Type.String({
      pattern: '^/',
      maxLength: 512,
      description:
        'the request path it serves after /api/request or /api/stream; :name segments become parameters.name',
    }),
    methods: Type.Optional(Type.Array(HttpMethod, { minItems: 1, description: 'default [GET]' })),
    version: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: "a label of your own for the saga's revision; sagaway does not read it",
      }),
    ),
    description: Type.Optional(Type.String({ description: 'free text' })),
    autoFail: Type.Optional(Type.Boolean({ description: 'any failed step ends the saga FAIL; default false' })),
    roles: Type.Optional(
      Type.Array(Type.String(), { description: 'the caller needs one of these roles (checked by the runner)' }),
    ),
    timeout: Type.Optional(DurationSchema),
    onFail: Type.Optional(
      Type.Object(
        { saga: NameOf('id of a saga of the same runner') },
        {
          ...strict,
          description:
            'after a FAIL or TIMEOUT outcome and its compensations, run this saga with { parameters, error, runId }, detached from the response',
        },
      ),
    ),
    inputSchema: Type.Optional(
      IoSchema(
        'JSON Schema 2020-12 of the input (the body, or the query), checked by the gateway before any step runs; or { $ref: FILE } relative to this file',
      ),
    ),
    outputSchema: Type.Optional(
      IoSchema(
        'JSON Schema 2020-12 of the response; in OpenAPI, checked by sagaway run, the test kit and (gateway.validateResponses) the gateway; or { $ref: FILE }',
      ),
    ),
    steps: Type.Array(StepSchema, {
      minItems: 1,
      description: 'the graph: exactly one start step, links between steps',
    }),
  },
  strict,
);

export type RawSaga = Static<typeof SagaSchema>;
export type RawStep = Static<typeof StepSchema>;
export type RawLink = Static<typeof LinkSchema>;
export type RawEventMeta = Static<typeof EventMetaSchema>;
export type RawRetry = Static<typeof RetrySchema>;

// The event settings travel as core/messages.ts EventMetaSpec: the two must not drift apart
// (a field added to the schema and not to the contract, or the other way round, fails to compile).
type MutuallyAssignable<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type SameShape<A, B> = MutuallyAssignable<A, B> extends true ? MutuallyAssignable<keyof A, keyof B> : false;
const eventMetaIsTheContract: SameShape<RawEventMeta, EventMetaSpec> = true;
void eventMetaIsTheContract;
