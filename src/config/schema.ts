import { Type, type Static, type TObject, type TSchema, type TUnion } from '@sinclair/typebox';
import { DURATION_PATTERN, SIZE_PATTERN } from '../core/units.js';

/**
 * The configuration format (DESIGN §3, §4, §6.1). This file is the one source of both the
 * TypeScript types (`Static<...>`) and the published JSON Schema (`schema/sagaway.schema.json`,
 * written by `npm run schema`; a test fails when the file is stale).
 */

const strict = { additionalProperties: false } as const;
const Name = Type.String({ minLength: 1, maxLength: 128 });

/** Milliseconds, a string of digits, or "250ms" / "2s" / "5m" / "1h". */
export const DurationSchema = Type.Union([Type.Integer({ minimum: 0 }), Type.String({ pattern: DURATION_PATTERN })], {
  description: 'milliseconds, or a string such as "250ms", "2s", "5m", "1h"',
});
/** Bytes, or "512b" / "64kb" / "1mb" / "1gb" (1024-based). */
export const SizeSchema = Type.Union([Type.Integer({ minimum: 0 }), Type.String({ pattern: SIZE_PATTERN })], {
  description: 'bytes, or a string such as "512b", "64kb", "1mb", "1gb"',
});

/**
 * A union told apart by its `type` field. Written as oneOf + discriminator so that a validator
 * reports the errors of the one variant that `type` names, not of every variant.
 */
function Discriminated<T extends TObject[]>(variants: [...T]) {
  return Type.Unsafe<Static<TUnion<T>>>({
    type: 'object',
    required: ['type'],
    discriminator: { propertyName: 'type' },
    oneOf: variants,
  });
}

const HttpMethod = Type.Union(
  ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'].map((m) => Type.Literal(m)),
  { description: 'one of GET, POST, PUT, PATCH, DELETE, HEAD' },
);
const HttpStatus = Type.Integer({ minimum: 100, maximum: 599 });
const ConditionValue = Type.Union([Type.String(), Type.Number(), Type.Boolean()], {
  description: 'a string, number or boolean',
});

// ---------------------------------------------------------------- sagas

export const LinkSchema = Type.Object(
  {
    to: Name,
    when: Type.Optional(Type.Array(ConditionValue, { minItems: 1, description: 'condition values; "*" = otherwise' })),
    priority: Type.Optional(Type.Integer({ description: 'highest wins when several links match; default 0' })),
  },
  strict,
);

export const EventMetaSchema = Type.Object(
  {
    handler: Type.Optional(Name),
    action: Name,
    version: Type.Integer({ minimum: 0, description: '0 = unversioned' }),
    domain: Type.Optional(Type.String({ maxLength: 256 })),
    inputElement: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    outputElement: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    parameters: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    stream: Type.Optional(Name),
    system: Type.Optional(Name),
    deployments: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })),
    inject: Type.Optional(Type.Boolean()),
    followAck: Type.Optional(Type.Boolean()),
    responseSystem: Type.Optional(Name),
    responseStream: Type.Optional(Name),
    timeout: Type.Optional(DurationSchema),
  },
  strict,
);

export const ErrorSpecSchema = Type.Object(
  {
    code: Type.Optional(Type.String({ pattern: '^[A-Z][A-Z0-9_]{1,63}$' })),
    message: Type.Optional(Type.String({ maxLength: 1024 })),
    http: Type.Optional(HttpStatus),
  },
  strict,
);

const StepType = Type.Union(
  ['start', 'event', 'transform', 'condition', 'success', 'fail'].map((t) => Type.Literal(t)),
  { description: 'one of start, event, transform, condition, success, fail' },
);

export const StepSchema = Type.Object(
  {
    id: Name,
    type: StepType,
    name: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    stroke: Type.Optional(Type.String()),
    fill: Type.Optional(Type.String()),
    autoFail: Type.Optional(Type.Boolean()),
    links: Type.Optional(Type.Array(LinkSchema)),
    eventMeta: Type.Optional(EventMetaSchema),
    expression: Type.Optional(Type.String({ minLength: 1, maxLength: 65536 })),
    outputElement: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    http: Type.Optional(HttpStatus),
    error: Type.Optional(ErrorSpecSchema),
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

export const SagaSchema = Type.Object(
  {
    id: Name,
    path: Type.String({ pattern: '^/', maxLength: 512 }),
    methods: Type.Optional(Type.Array(HttpMethod, { minItems: 1, description: 'default [GET]' })),
    version: Type.Optional(Type.Integer({ minimum: 0 })),
    description: Type.Optional(Type.String()),
    autoFail: Type.Optional(Type.Boolean()),
    roles: Type.Optional(Type.Array(Type.String())),
    timeout: Type.Optional(DurationSchema),
    steps: Type.Array(StepSchema, { minItems: 1 }),
  },
  strict,
);

// ---------------------------------------------------------------- runners

/** `{ default?, override? }` for one field of an event's settings (DESIGN §6.6). */
const MetaLayer = Type.Object(
  { default: Type.Optional(Type.Unknown()), override: Type.Optional(Type.Unknown()) },
  strict,
);
const MetaLayers = Type.Record(Type.String(), MetaLayer, {
  description: 'eventMeta field (dots for nested: parameters.url) -> { default, override }',
});

export const StructuralActionSchema = Type.Object(
  { handler: Type.Optional(Name), description: Type.Optional(Type.String()), meta: Type.Optional(MetaLayers) },
  strict,
);

export const StreamBindingSchema = Type.Object(
  { handler: Type.Optional(Name), system: Type.Optional(Name), meta: Type.Optional(MetaLayers) },
  strict,
);

export const RunnerSchema = Type.Object(
  {
    deployment: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    handlers: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    sagas: Type.Optional(Type.Array(Type.Union([Type.String({ minLength: 1 }), SagaSchema]))),
    actions: Type.Optional(Type.Record(Type.String(), StructuralActionSchema)),
    streams: Type.Optional(Type.Record(Type.String(), StreamBindingSchema)),
    maxSteps: Type.Optional(Type.Integer({ minimum: 1, description: 'steps one saga run may take; default 1000' })),
    journal: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'alias of a state where saga progress is journaled (resume, /api/status)',
      }),
    ),
  },
  strict,
);

// ---------------------------------------------------------------- systems and states

const NatsSystem = Type.Object(
  {
    type: Type.Literal('nats'),
    servers: Type.Array(Type.String(), { minItems: 1 }),
    ackWait: Type.Optional(DurationSchema),
    maxDeliver: Type.Optional(Type.Integer({ minimum: 1 })),
    user: Type.Optional(Type.String()),
    pass: Type.Optional(Type.String()),
    token: Type.Optional(Type.String()),
    prefix: Type.Optional(
      Type.String({ pattern: '^[A-Za-z0-9_-]+$', description: 'stream/subject prefix; default sagaway' }),
    ),
  },
  strict,
);
const HttpSystem = Type.Object(
  {
    type: Type.Literal('http'),
    baseUrl: Type.String({ pattern: '^https?://' }),
    timeout: Type.Optional(DurationSchema),
    maxResponseSize: Type.Optional(SizeSchema),
    headers: Type.Optional(Type.Record(Type.String(), Type.String())),
    allowPrivate: Type.Optional(
      Type.Boolean({ description: 'allow loopback/private/link-local targets; default false' }),
    ),
    followRedirects: Type.Optional(Type.Boolean({ description: 'default false' })),
  },
  strict,
);
const LocalSystem = Type.Object({ type: Type.Literal('local') }, strict);
export const SystemSchema = Discriminated([NatsSystem, HttpSystem, LocalSystem]);

const Query = Type.Object(
  {
    sql: Type.Optional(Type.String({ description: 'SQL with :name placeholders (sqlite, postgres)' })),
    filter: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'memory: equality filter' })),
  },
  strict,
);
const Queries = Type.Optional(Type.Record(Type.String(), Query));
const MemoryState = Type.Object(
  { type: Type.Literal('memory'), queries: Queries, seed: Type.Optional(Type.String()) },
  strict,
);
const SqliteState = Type.Object(
  {
    type: Type.Literal('sqlite'),
    file: Type.String({ minLength: 1, description: 'path of the database file, or ":memory:"' }),
    table: Type.Optional(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]{0,62}$' })),
    queries: Queries,
    seed: Type.Optional(Type.String()),
  },
  strict,
);
const PostgresState = Type.Object(
  {
    type: Type.Literal('postgres'),
    url: Type.String({ minLength: 1 }),
    table: Type.Optional(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]{0,62}$' })),
    poolSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    queries: Queries,
    seed: Type.Optional(Type.String()),
  },
  strict,
);
export const StateSchema = Discriminated([MemoryState, SqliteState, PostgresState]);

// ---------------------------------------------------------------- gateway

const JwtAuth = Type.Object(
  {
    secret: Type.Optional(Type.String({ minLength: 1 })),
    publicKey: Type.Optional(Type.String({ minLength: 1, description: 'PEM (SPKI) public key' })),
    jwksUrl: Type.Optional(Type.String({ pattern: '^https?://' })),
    algorithms: Type.Optional(Type.Array(Type.String(), { minItems: 1 })),
    issuer: Type.Optional(Type.String()),
    audience: Type.Optional(Type.String()),
    rolesClaim: Type.Optional(Type.String({ description: 'path of the roles array in the token; default roles' })),
    clockTolerance: Type.Optional(DurationSchema),
  },
  strict,
);
const ApiKey = Type.Object(
  {
    name: Name,
    sha256: Type.String({ pattern: '^[0-9a-fA-F]{64}$' }),
    roles: Type.Optional(Type.Array(Type.String())),
  },
  strict,
);
export const ApiSchema = Type.Object(
  {
    path: Type.String({ pattern: '^/' }),
    runner: Name,
    methods: Type.Optional(Type.Array(HttpMethod, { minItems: 1 })),
    roles: Type.Optional(Type.Array(Type.String())),
    public: Type.Optional(Type.Boolean()),
  },
  strict,
);
export const GatewaySchema = Type.Object(
  {
    port: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
    host: Type.Optional(Type.String()),
    trustProxy: Type.Optional(Type.Boolean()),
    auth: Type.Optional(
      Type.Object(
        {
          jwt: Type.Optional(JwtAuth),
          apiKeys: Type.Optional(Type.Array(ApiKey)),
          cookie: Type.Optional(Type.String({ description: 'cookie holding the token; default sagaway_token' })),
          queryToken: Type.Optional(
            Type.Boolean({ description: 'accept ?access_token= on stream GETs; default false' }),
          ),
        },
        strict,
      ),
    ),
    apis: Type.Optional(Type.Array(ApiSchema)),
    stream: Type.Optional(
      Type.Object(
        {
          defaultWait: Type.Optional(DurationSchema),
          minWait: Type.Optional(DurationSchema),
          maxWait: Type.Optional(DurationSchema),
          heartbeat: Type.Optional(DurationSchema),
          maxPerClient: Type.Optional(Type.Integer({ minimum: 1 })),
          maxStreams: Type.Optional(Type.Integer({ minimum: 1 })),
          stallTimeout: Type.Optional(DurationSchema),
          maxEntries: Type.Optional(
            Type.Integer({ minimum: 1, description: 'entries sent from one poll; default 1000' }),
          ),
          cursorKey: Type.Optional(Type.String({ minLength: 16 })),
        },
        strict,
      ),
    ),
    limits: Type.Optional(
      Type.Object({ bodyLimit: Type.Optional(SizeSchema), timeout: Type.Optional(DurationSchema) }, strict),
    ),
    static: Type.Optional(Type.String({ description: 'folder of static files served at /' })),
  },
  strict,
);

// ---------------------------------------------------------------- the file

export const ConfigSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    gateway: Type.Optional(GatewaySchema),
    systems: Type.Optional(Type.Record(Type.String(), SystemSchema)),
    defaultSystem: Type.Optional(Name),
    states: Type.Optional(Type.Record(Type.String(), StateSchema)),
    values: Type.Optional(Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()]))),
    secrets: Type.Optional(
      Type.Union([
        Type.Object({ from: Type.Literal('env'), prefix: Type.Optional(Type.String()) }, strict),
        Type.Object({ from: Type.Literal('file'), file: Type.String({ minLength: 1 }) }, strict),
      ]),
    ),
    runners: Type.Optional(Type.Record(Type.String(), RunnerSchema)),
  },
  { ...strict, $id: 'https://sagaway.dev/schema/sagaway.schema.json', title: 'sagaway configuration' },
);

/** A saga file holds one saga or a list of them. */
export const SagaFileSchema = Type.Union([SagaSchema, Type.Array(SagaSchema)]);

export type RawConfig = Static<typeof ConfigSchema>;
export type RawSaga = Static<typeof SagaSchema>;
export type RawStep = Static<typeof StepSchema>;
export type RawLink = Static<typeof LinkSchema>;
export type RawEventMeta = Static<typeof EventMetaSchema>;
export type RawRunner = Static<typeof RunnerSchema>;
export type RawSystem = Static<typeof SystemSchema>;
export type RawState = Static<typeof StateSchema>;
export type RawGateway = Static<typeof GatewaySchema>;
export type RawApi = Static<typeof ApiSchema>;
export type RawMetaLayers = Record<string, { default?: unknown; override?: unknown }>;

/** The JSON Schema document published at schema/sagaway.schema.json. */
export function publishedSchema(): TSchema {
  return { $schema: 'http://json-schema.org/draft-07/schema#', ...ConfigSchema };
}
