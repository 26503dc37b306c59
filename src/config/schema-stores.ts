import { Type } from '@sinclair/typebox';
import { Discriminated, DurationOf, DurationSchema, SizeOf, SizeSchema, strict } from '../core/schema-kit.js';

/** The `systems` and `states` sections of the configuration format (schema.ts assembles the file). */

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
    advertiseInterval: Type.Optional(
      DurationOf(
        'how often each runner process tells the others it is alive; one silent for 3 intervals is gone (its events go elsewhere, its journaled runs are resumed); every process on the system should use the same value; default 2s',
      ),
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
