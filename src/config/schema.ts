import { Type, type Static, type TSchema } from '@sinclair/typebox';

/**
 * The configuration format (DESIGN §3, §4, §6.1). This file is the one source of both the
 * TypeScript types (`Static<...>`) and the published JSON Schema (`schema/sagaway.schema.json`,
 * written by `npm run schema`; a test fails when the file is stale).
 */

import {
  Discriminated,
  DurationOf,
  DurationSchema,
  HttpMethod,
  NameOf,
  SizeOf,
  SizeSchema,
  strict,
} from '../core/schema-kit.js';
import { SagaSchema } from '../saga/schema.js';
import { OpenApiSchema, ValidateResponsesSchema } from './openapi-schema.js';

export { DurationSchema, SizeSchema } from '../core/schema-kit.js';
export { EventMetaSchema, ErrorSpecSchema, LinkSchema, SagaSchema, StepSchema } from '../saga/schema.js';
export type { RawEventMeta, RawLink, RawSaga, RawStep } from '../saga/schema.js';

// ---------------------------------------------------------------- runners

/** `{ default?, override? }` for one field of an event's settings (DESIGN §6.6). */
const MetaLayer = Type.Object(
  {
    default: Type.Optional(Type.Unknown({ description: 'used unless the step sets the field' })),
    override: Type.Optional(Type.Unknown({ description: 'used whatever the step sets' })),
  },
  strict,
);
const MetaLayers = Type.Record(Type.String(), MetaLayer, {
  description: 'eventMeta field (dots for nested: parameters.url) -> { default, override }',
});

export const StructuralActionSchema = Type.Object(
  {
    handler: Type.Optional(NameOf('the handler that runs it')),
    description: Type.Optional(Type.String({ description: 'free text' })),
    meta: Type.Optional(MetaLayers),
  },
  strict,
);

export const StreamBindingSchema = Type.Object(
  {
    handler: Type.Optional(NameOf('events on this stream default to this handler')),
    system: Type.Optional(NameOf('system of the stream; default defaultSystem, else local')),
    meta: Type.Optional(MetaLayers),
  },
  strict,
);

export const RunnerSchema = Type.Object(
  {
    deployment: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'this runner\'s deployment id; default "1"' }),
    ),
    handlers: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        description: 'built-in handler names and paths of handler modules (relative to this file)',
      }),
    ),
    sagas: Type.Optional(
      Type.Array(Type.Union([Type.String({ minLength: 1 }), SagaSchema]), {
        description: 'globs of saga files (relative to this file) and inline sagas',
      }),
    ),
    actions: Type.Optional(
      Type.Record(Type.String(), StructuralActionSchema, {
        description: 'structural actions: name -> { handler, meta } defaults and overrides of event settings',
      }),
    ),
    streams: Type.Optional(
      Type.Record(Type.String(), StreamBindingSchema, {
        description: 'event streams this runner consumes: name -> { handler, system, meta }',
      }),
    ),
    statusTtl: Type.Optional(
      DurationOf(
        "distributed mode: how long each run's outcome stays readable at /api/status without a journal (a NATS key-value bucket); 0 = not kept; default 24h",
      ),
    ),
    statusMaxSize: Type.Optional(
      SizeOf(
        'largest outcome kept for /api/status without a journal; a larger response is left out (responseOmitted); default 64kb, at most 1mb',
      ),
    ),
    maxSteps: Type.Optional(Type.Integer({ minimum: 1, description: 'steps one saga run may take; default 1000' })),
    maxRunsPerRequest: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 100000,
        description:
          "saga runs one request may start: its own and the nested sagas (saga.StartSaga) at any depth; past it RUN_BUDGET_EXCEEDED; the request's onFail runs have a budget of the same size; default 100",
      }),
    ),
    journal: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'alias of a state where saga progress is journaled (resume, /api/status)',
      }),
    ),
    journalRetention: Type.Optional(
      DurationOf(
        'how long the journal keeps a finished run (its outcome for /api/status) after its last write; running runs are never removed; default 7d',
      ),
    ),
  },
  strict,
);

// ---------------------------------------------------------------- systems and states

const NatsSystem = Type.Object(
  {
    type: Type.Literal('nats', { description: 'NATS JetStream, an event streaming platform' }),
    servers: Type.Array(Type.String(), { minItems: 1, description: 'server URLs, e.g. nats://127.0.0.1:4222' }),
    ackWait: Type.Optional(DurationSchema),
    maxDeliver: Type.Optional(
      Type.Integer({ minimum: 1, description: 'deliveries of one event before EVENT_DELIVERY_EXHAUSTED; default 5' }),
    ),
    user: Type.Optional(Type.String({ description: 'user name (use ${env:...})' })),
    pass: Type.Optional(Type.String({ description: 'password (use ${env:...})' })),
    token: Type.Optional(Type.String({ description: 'auth token (use ${env:...})' })),
    prefix: Type.Optional(
      Type.String({ pattern: '^[A-Za-z0-9_-]+$', description: 'stream/subject prefix; default sagaway' }),
    ),
    connectTimeout: Type.Optional(DurationOf('how long one connection attempt to a server waits; default 2s')),
    runGrace: Type.Optional(
      DurationOf(
        "how long past a saga's deadline a gateway waits for the runner's answer (the runner answers TIMEOUT itself); default 2s",
      ),
    ),
    publishTimeout: Type.Optional(
      DurationOf('how long publishing an event or a durable reply waits for JetStream to store it; default 5s'),
    ),
    eventsMaxAge: Type.Optional(
      DurationOf('how long an event nobody consumed stays in its JetStream stream; default 1h'),
    ),
    repliesMaxAge: Type.Optional(
      DurationOf('how long a durable reply nobody read stays in its JetStream stream; default 10m'),
    ),
  },
  strict,
);
const HttpSystem = Type.Object(
  {
    type: Type.Literal('http', { description: 'a base URL that the rest handler calls' }),
    baseUrl: Type.String({ pattern: '^https?://', description: 'origin and base path of the service' }),
    timeout: Type.Optional(DurationSchema),
    maxResponseSize: Type.Optional(SizeSchema),
    headers: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'headers sent with every call' })),
    allowPrivate: Type.Optional(
      Type.Boolean({ description: 'allow loopback/private/link-local targets; default false' }),
    ),
    followRedirects: Type.Optional(Type.Boolean({ description: 'default false' })),
  },
  strict,
);
const LocalSystem = Type.Object(
  { type: Type.Literal('local', { description: 'in this process, like the built-in local system' }) },
  strict,
);
export const SystemSchema = Discriminated([NatsSystem, HttpSystem, LocalSystem]);

const Query = Type.Object(
  {
    sql: Type.Optional(Type.String({ description: 'SQL with :name placeholders (sqlite, postgres)' })),
    filter: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'memory: equality filter' })),
  },
  strict,
);
const Queries = Type.Optional(
  Type.Record(Type.String(), Query, { description: 'named queries for query.GetQuery: name -> { sql } or { filter }' }),
);
/** The seed file of a state, for editors. */
const Seed = () =>
  Type.Optional(
    Type.String({
      description: 'JSON file of records [{ id, data }] loaded when the state is empty (relative to this file)',
    }),
  );
/** The table name of a SQL state, for editors. */
const Table = () =>
  Type.Optional(
    Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]{0,62}$', description: "the SQL table; default the state's alias" }),
  );
/** A size setting with its own description (what it bounds, and its default). */
const MaxPageSize = Type.Optional(
  SizeOf(
    'bytes of record data one list page holds; a page stops early (with `next`) once its records reach it; default 4mb',
  ),
);
const MaxValues = Type.Optional(
  Type.Integer({
    minimum: 1,
    description:
      'JSON values one record may hold (a write over it fails TOO_MANY_VALUES), and one list page (it stops early with `next`); default 20000',
  }),
);
const MemoryState = Type.Object(
  {
    type: Type.Literal('memory', { description: 'in process, lost on restart' }),
    queries: Queries,
    seed: Seed(),
    maxPageSize: MaxPageSize,
    maxValues: MaxValues,
  },
  strict,
);
const SqliteState = Type.Object(
  {
    type: Type.Literal('sqlite', { description: 'a SQLite file (WAL)' }),
    file: Type.String({ minLength: 1, description: 'path of the database file, or ":memory:"' }),
    table: Table(),
    queries: Queries,
    seed: Seed(),
    maxPageSize: MaxPageSize,
    maxValues: MaxValues,
  },
  strict,
);
const PostgresState = Type.Object(
  {
    type: Type.Literal('postgres', { description: 'a PostgreSQL table' }),
    url: Type.String({ minLength: 1, description: 'connection URL, postgres://user:pass@host/db (use ${env:...})' }),
    table: Table(),
    poolSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'connections; default 10' })),
    queries: Queries,
    seed: Seed(),
    maxPageSize: MaxPageSize,
    maxValues: MaxValues,
  },
  strict,
);
export const StateSchema = Discriminated([MemoryState, SqliteState, PostgresState]);

// ---------------------------------------------------------------- gateway

const JwtAuth = Type.Object(
  {
    secret: Type.Optional(
      Type.String({ minLength: 1, description: 'HMAC secret of HS256/384/512 tokens (use ${env:...})' }),
    ),
    publicKey: Type.Optional(Type.String({ minLength: 1, description: 'PEM (SPKI) public key' })),
    jwksUrl: Type.Optional(Type.String({ pattern: '^https?://', description: "URL of the identity provider's JWKS" })),
    algorithms: Type.Optional(
      Type.Array(Type.String(), {
        minItems: 1,
        description: 'accepted algorithms; default [HS256] with a secret, [RS256, ES256, EdDSA] with a key',
      }),
    ),
    issuer: Type.Optional(Type.String({ description: 'required iss claim' })),
    audience: Type.Optional(Type.String({ description: 'required aud claim' })),
    rolesClaim: Type.Optional(Type.String({ description: 'path of the roles array in the token; default roles' })),
    principalClaim: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'dotted path of the claim that names the caller (a non-empty string); a token without it is 401; default sub',
      }),
    ),
    clockTolerance: Type.Optional(DurationSchema),
  },
  { ...strict, description: 'JWT bearer tokens: exactly one of secret, publicKey, jwksUrl' },
);
const ApiKey = Type.Object(
  {
    name: NameOf("the key's name; the caller is apikey:<name>"),
    sha256: Type.String({
      pattern: '^[0-9a-fA-F]{64}$',
      description: 'hex SHA-256 of the key sent in X-API-Key (the key itself is never stored)',
    }),
    roles: Type.Optional(Type.Array(Type.String(), { description: 'roles of its caller' })),
  },
  strict,
);
/** A duration setting with its own description (what it bounds, and its default). */
const Rate = Type.Object(
  {
    max: Type.Integer({ minimum: 1, description: 'requests one client may make per window' }),
    window: DurationOf('the window the count runs over'),
  },
  strict,
);
const GlobalRate = Type.Object(
  {
    max: Type.Optional(
      Type.Integer({ minimum: 1, description: 'requests one client may make per window; default 200' }),
    ),
    window: Type.Optional(DurationOf('the window the count runs over; default 10s')),
    redis: Type.Optional(
      Type.String({
        pattern: '^rediss?://',
        description: 'Redis URL of a count shared by several gateway replicas; default: counted in this process',
      }),
    ),
  },
  strict,
);
/** Which streams of the stream form share one saga run per poll (docs/streams.md#shared-polls). */
const ShareScope = Type.Union([Type.Literal('caller'), Type.Literal('all'), Type.Literal('off')], {
  description:
    'which streams share one saga run per poll: caller = streams of the same principal (default), ' +
    'all = every caller (the saga runs with no user: $user and @.user are empty), off = none',
});
export const ApiSchema = Type.Object(
  {
    path: Type.String({ pattern: '^/', description: 'path prefix, matched by whole segments; / maps everything' }),
    runner: NameOf('the runner whose sagas serve it'),
    methods: Type.Optional(
      Type.Array(HttpMethod, { minItems: 1, description: 'allowed methods (405 with Allow otherwise); default any' }),
    ),
    roles: Type.Optional(
      Type.Array(Type.String(), { description: 'the caller needs one of these roles (403 otherwise)' }),
    ),
    public: Type.Optional(
      Type.Boolean({
        description: 'no credentials needed; default false (then a valid token or API key is, 401 otherwise)',
      }),
    ),
    csp: Type.Optional(
      Type.String({
        pattern: '^[\\x20-\\x7E]{1,4096}$',
        description:
          "Content-Security-Policy of a saga's own `html` pages under this path; default a strict policy without scripts",
      }),
    ),
    rate: Type.Optional(
      Type.Union([Rate, Type.Literal(false)], {
        description: 'own per-client rate limit of this API (counted apart from the others), or false for none',
      }),
    ),
    stream: Type.Optional(
      Type.Object(
        { share: Type.Optional(ShareScope) },
        { ...strict, description: "the stream form of this API: overrides of gateway.stream's settings" },
      ),
    ),
  },
  strict,
);
const Limits = Type.Object(
  {
    bodyLimit: Type.Optional(SizeSchema),
    timeout: Type.Optional(DurationSchema),
    maxResponse: Type.Optional(
      SizeOf('largest response of one request, and of one stream poll; over it 502 RESPONSE_TOO_LARGE; default 8mb'),
    ),
    headerTimeout: Type.Optional(DurationOf('time to receive the request headers; default 10s')),
    bodyTimeout: Type.Optional(DurationOf('time to receive the whole request, headers and body; default 30s')),
    idleTimeout: Type.Optional(
      DurationOf('a connection without traffic for this long is closed (streams excepted); default 60s'),
    ),
    maxConnections: Type.Optional(
      Type.Integer({ minimum: 1, description: 'open connections at most; more are closed unserved; default 16384' }),
    ),
    maxValues: Type.Optional(
      Type.Integer({
        minimum: 1,
        description:
          'JSON values one request body may hold (arrays, objects and scalars); over it 413 TOO_MANY_VALUES; default 10000',
      }),
    ),
    rate: Type.Optional(
      Type.Union([GlobalRate, Type.Literal(false)], {
        description: 'per-client rate limit of both forms; default 200 per 10s; false = none',
      }),
    ),
  },
  { ...strict, description: 'request limits: sizes, times, connections and rates (docs/gateway.md#limits)' },
);
export const GatewaySchema = Type.Object(
  {
    port: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 65535, description: 'port; --port and PORT win; default 8080' }),
    ),
    host: Type.Optional(
      Type.String({ description: 'address to listen on; default 127.0.0.1 (this machine), 0.0.0.0 in containers' }),
    ),
    trustProxy: Type.Optional(
      Type.Union(
        [Type.Boolean(), Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 256 })],
        {
          description:
            'behind reverse proxies: a list of their addresses or CIDRs (also loopback, linklocal, uniquelocal), the client being the last X-Forwarded-For entry not from one of them; true trusts whatever connects as one proxy (the last entry); default false',
        },
      ),
    ),
    auth: Type.Optional(
      Type.Object(
        {
          jwt: Type.Optional(JwtAuth),
          apiKeys: Type.Optional(Type.Array(ApiKey, { description: 'API keys (header X-API-Key)' })),
          cookie: Type.Optional(Type.String({ description: 'cookie holding the token; default sagaway_token' })),
          queryToken: Type.Optional(
            Type.Boolean({ description: 'accept ?access_token= on stream GETs; default false' }),
          ),
        },
        { ...strict, description: 'how callers are authenticated: jwt and/or apiKeys' },
      ),
    ),
    apis: Type.Optional(
      Type.Array(ApiSchema, { description: 'what the gateway serves: path prefix -> runner, methods, auth' }),
    ),
    stream: Type.Optional(
      Type.Object(
        {
          defaultWait: Type.Optional(DurationSchema),
          minWait: Type.Optional(DurationSchema),
          maxWait: Type.Optional(DurationSchema),
          heartbeat: Type.Optional(DurationSchema),
          maxPerClient: Type.Optional(
            Type.Integer({ minimum: 1, description: 'open streams per client (429 over it); default 10' }),
          ),
          maxStreams: Type.Optional(
            Type.Integer({ minimum: 1, description: 'open streams in total (503 over it); default 10000' }),
          ),
          stallTimeout: Type.Optional(DurationSchema),
          maxEntries: Type.Optional(
            Type.Integer({ minimum: 1, description: 'entries sent from one poll; default 1000' }),
          ),
          maxBuffered: Type.Optional(
            SizeOf(
              'bytes queued for a client that does not read; over it the stream waits for the socket ' +
                '(no polls) and closes after stallTimeout with a resumable cursor; default 1mb',
            ),
          ),
          share: Type.Optional(ShareScope),
          cursorKey: Type.Optional(
            Type.String({
              minLength: 16,
              description: 'HMAC key of SSE cursors, shared by gateway replicas; default a random key per process',
            }),
          ),
        },
        { ...strict, description: 'the stream form (SSE): waits, heartbeat, limits, cursors' },
      ),
    ),
    limits: Type.Optional(Limits),
    static: Type.Optional(Type.String({ description: 'folder of static files served at /' })),
    idempotency: Type.Optional(
      Type.Object(
        {
          ttl: Type.Optional(DurationOf("how long a request's outcome is kept for replays; default 24h")),
          state: Type.Optional(
            NameOf(
              'alias of a state whose database keeps the keys (sqlite, or postgres for several replicas); default this process',
            ),
          ),
          maxBody: Type.Optional(
            SizeOf('largest response body kept for replays; a larger one is replayed without its body; default 256kb'),
          ),
          maxKeysPerCaller: Type.Optional(
            Type.Integer({
              minimum: 1,
              maximum: 1_000_000,
              description:
                'live keys one caller (an anonymous one: one source address) may hold; a new key past it is 429 IDEMPOTENCY_KEYS_EXHAUSTED; default 1000',
            }),
          ),
        },
        {
          ...strict,
          description: 'Idempotency-Key requests: same key and body -> the stored response (docs/gateway.md)',
        },
      ),
    ),
    openapi: Type.Optional(OpenApiSchema),
    validateResponses: Type.Optional(ValidateResponsesSchema),
    console: Type.Optional(
      Type.Object(
        {
          enabled: Type.Optional(Type.Boolean({ description: 'serve the console; default true' })),
          roles: Type.Optional(
            Type.Array(Type.String({ minLength: 1 }), {
              description:
                'roles a caller needs (same auth as the APIs); absent = loopback clients only, others get 404',
            }),
          ),
          path: Type.Optional(
            Type.String({
              pattern: '^(/[A-Za-z0-9._~-]+)+$',
              maxLength: 128,
              description: 'where the console is served; default /console (and / redirects there)',
            }),
          ),
          sample: Type.Optional(
            Type.Integer({
              minimum: 1,
              description:
                'trace records one process sends per second at most while a console watches; over it runs are sampled; default 50',
            }),
          ),
          snapshot: Type.Optional(
            SizeOf('bytes of one step payload snapshot in a trace (longer ones are cut); default 2kb'),
          ),
          natsTraces: Type.Optional(
            Type.Boolean({
              description:
                'distributed mode: runner processes send their traced runs (masked) over NATS while this console watches; default false',
            }),
          ),
          mask: Type.Optional(
            Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
              maxItems: 100,
              description:
                'more keys whose values snapshots and settings mask, besides password, pin, token, card, ...: a part matched anywhere in the key (any case), or /regex/; default none',
            }),
          ),
        },
        { ...strict, description: 'the console: saga graphs, live runs, try-it (docs/console.md)' },
      ),
    ),
  },
  { ...strict, description: 'the HTTP front: port, host, auth, apis, stream, limits' },
);

// ---------------------------------------------------------------- the file

export const ConfigSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String({ description: 'the JSON Schema of this file, for editors' })),
    gateway: Type.Optional(GatewaySchema),
    systems: Type.Optional(
      Type.Record(Type.String(), SystemSchema, { description: 'named connections: nats, http, local' }),
    ),
    defaultSystem: Type.Optional(NameOf('the system of event streams that name none; default local')),
    states: Type.Optional(
      Type.Record(Type.String(), StateSchema, { description: 'named stores of records: memory, sqlite, postgres' }),
    ),
    values: Type.Optional(
      Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()]), {
        description: 'named values for ${{NAME}} in injected settings',
      }),
    ),
    secrets: Type.Optional(
      Type.Union(
        [
          Type.Object(
            {
              from: Type.Literal('env', { description: 'read SECRET from the environment variable <prefix>SECRET' }),
              prefix: Type.Optional(Type.String({ description: 'default SAGAWAY_SECRET_' })),
            },
            strict,
          ),
          Type.Object(
            {
              from: Type.Literal('file', { description: 'read secrets from a JSON file' }),
              file: Type.String({ minLength: 1, description: 'the JSON file { NAME: value } (relative to this file)' }),
            },
            strict,
          ),
        ],
        { description: '{ from: env, prefix } or { from: file, file }: where #{{NAME}} secrets come from' },
      ),
    ),
    runners: Type.Optional(
      Type.Record(Type.String(), RunnerSchema, {
        description: 'runners by name: their handlers, sagas, actions, streams',
      }),
    ),
  },
  { ...strict, $id: 'https://sagaway.dev/schema/sagaway.schema.json', title: 'sagaway configuration' },
);

/** A saga file holds one saga or a list of them. */
export const SagaFileSchema = Type.Union([SagaSchema, Type.Array(SagaSchema)]);

export type RawConfig = Static<typeof ConfigSchema>;
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
