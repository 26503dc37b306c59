import type { RawEventMeta, RawMetaLayers, RawSaga } from './schema.js';
import type { CompiledSaga } from '../saga/graph.js';
import type { OpenApiSettings } from './compile-openapi.js';

/**
 * Compiled settings: what the loader (config/load.ts, then config/compile.ts) produces from a
 * configuration file after validation. Frozen, durations in milliseconds, sizes in bytes and
 * relative paths resolved from the config file's folder; the compile stage fills in every
 * default. A few fields are still optional (marked so below) only for settings made by code
 * (tests, embedding programs), whose readers apply the same default. Nothing downstream
 * re-checks them.
 */

/** JWT verification (DESIGN §3 gateway.auth.jwt). */
export interface JwtSettings {
  secret?: string;
  publicKey?: string;
  jwksUrl?: string;
  /** pinned algorithms; default HS256 with a secret, RS256/ES256/EdDSA with a key */
  algorithms: readonly string[];
  issuer?: string;
  audience?: string;
  /** path of the roles array in the token; default `roles` */
  rolesClaim: string;
  /** dotted path of the claim naming the caller; a token without it is refused; default `sub` */
  principalClaim: string;
  /** default 5 s */
  clockToleranceMs: number;
}

export interface ApiKeySettings {
  name: string;
  /** lower-case hex SHA-256 of the key */
  sha256: string;
  roles: readonly string[];
}

export interface AuthSettings {
  jwt?: JwtSettings;
  apiKeys: readonly ApiKeySettings[];
  /** cookie that may carry the JWT; default `sagaway_token` */
  cookie: string;
  /** accept `?access_token=` on stream GETs; default false */
  queryToken: boolean;
}

/** One gateway API entry: a path prefix mapped to a runner. */
export interface ApiSettings {
  path: string;
  runner: string;
  /** allowed methods; undefined = any */
  methods?: readonly string[];
  roles: readonly string[];
  public: boolean;
  /** Content-Security-Policy of a saga's own `html` pages; undefined = the strict default */
  csp?: string;
  /** own rate limit of this API; false = none; undefined = the gateway's (`limits.rate`) */
  rate?: RateSettings | false;
  /** the stream form's overrides for this API; undefined = `gateway.stream`'s */
  stream?: { share?: ShareScope };
}

/**
 * Which streams share one saga run per poll (docs/streams.md#shared-polls): `caller` = those of
 * one principal, `all` = every caller (the saga runs with no user), `off` = none.
 */
export type ShareScope = 'caller' | 'all' | 'off';

/** A per-client rate limit: `max` requests per `windowMs`. */
export interface RateSettings {
  max: number;
  windowMs: number;
}

/** `gateway.limits` (DESIGN §10): what one request, one connection and one client may take. */
export interface LimitSettings {
  /** largest request body; default 1 MiB */
  bodyLimit: number;
  /** deadline of a saga run; default 10 s */
  timeoutMs: number;
  /** largest response (one request, one stream poll) in bytes; default 8 MiB */
  maxResponse: number;
  /** time to receive the request headers; default 10 s */
  headerTimeoutMs: number;
  /** time to receive the whole request (headers and body); default 30 s */
  bodyTimeoutMs: number;
  /** a connection without traffic for this long is closed (not SSE streams); default max(60 s, timeout + 10 s) */
  idleTimeoutMs: number;
  /** open connections at most; default 16384 */
  maxConnections: number;
  /** JSON values one request body may hold; default 10,000 (DEFAULT_MAX_VALUES) */
  maxValues: number;
  /** per-client rate limit of both forms; default 200 per 10 s; undefined = none */
  rate?: RateSettings & { redis?: string };
}

export interface StreamSettings {
  defaultWaitMs: number;
  minWaitMs: number;
  maxWaitMs: number;
  heartbeatMs: number;
  maxPerClient: number;
  maxStreams: number;
  /** a client whose socket stays full this long is closed; default 30 s */
  stallTimeoutMs: number;
  /** entries sent from one poll at most; default 1000 */
  maxEntries: number;
  /** bytes queued for a socket before the loop waits for it to drain; default 1 MiB */
  maxBuffered: number;
  /** which streams share one saga run per poll; default `caller` */
  share: ShareScope;
  /** HMAC key of cursor tokens; undefined = a random key per process */
  cursorKey?: string;
  /** an SSE stream is closed after this long, with a retry hint and a resumable id; undefined = never */
  maxLifetimeMs?: number;
  /** the long-poll form (docs/streams.md#long-poll); optional in hand-made settings (defaults then) */
  longPoll?: LongPollSettings;
}

/** `gateway.stream.longPoll`: how long-poll requests are held and how caches may keep their answers. */
export interface LongPollSettings {
  /** longest hold of a request with nothing new (within the feed's wait); default 20 s */
  holdMs: number;
  /** `max-age` of a cacheable answer, in seconds; default 5 */
  maxAge: number;
  /** `stale-while-revalidate` of a cacheable answer, in seconds; default 10 */
  staleWhileRevalidate: number;
}

/** The defaults of `gateway.stream.longPoll`. */
export const DEFAULT_LONG_POLL: Readonly<LongPollSettings> = Object.freeze({
  holdMs: 20_000,
  maxAge: 5,
  staleWhileRevalidate: 10,
});

/** The defaults of `gateway.idempotency` (compile-gateway.ts fills them in). */
export const DEFAULT_IDEMPOTENCY_SETTINGS: Readonly<IdempotencySettings> = Object.freeze({
  ttlMs: 24 * 60 * 60 * 1000,
  maxBody: 256 * 1024,
  maxKeysPerCaller: 1000,
});

/** `gateway.idempotency`: how `Idempotency-Key` requests are remembered (docs/gateway.md). */
export interface IdempotencySettings {
  /** how long a request's outcome is kept; default 24 h */
  ttlMs: number;
  /** alias of the state whose database keeps the keys; undefined = this process's memory */
  state?: string;
  /** largest response body kept for replays; a larger one is kept without it; default 256 KiB */
  maxBody: number;
  /** live keys one caller may hold; past it a new key is 429 IDEMPOTENCY_KEYS_EXHAUSTED; default 1000 */
  maxKeysPerCaller: number;
}

export interface GatewaySettings {
  port?: number;
  host: string;
  /** proxies that may name the client: false, true (one hop, whatever connects), or their addresses/CIDRs */
  trustProxy: boolean | readonly string[];
  auth: AuthSettings;
  apis: readonly ApiSettings[];
  stream: StreamSettings;
  limits: LimitSettings;
  /** absolute folder of static files served at `/`, if any */
  static?: string;
  /** Idempotency-Key requests */
  idempotency: IdempotencySettings;
  /** serve GET /api/openapi.json (false = off), with these servers and license */
  openapi: false | OpenApiSettings;
  /** check answers against each saga's outputSchema (500 INVALID_OUTPUT); default false */
  validateResponses: boolean;
  /** the console (docs/console.md) */
  console: ConsoleSettings;
  /** who may list, redrive and abort runs (`/api/runs`, docs/runs.md) */
  admin: AdminSettings;
}

/** `gateway.admin`: the run routes' access (docs/runs.md, Access). */
export interface AdminSettings {
  /** roles a caller needs; empty = loopback clients only, by the console's rules (none behind trustProxy) */
  roles: readonly string[];
}

/** `gateway.console`: who may see the console, where, and how much its traces carry. */
export interface ConsoleSettings {
  /** default true */
  enabled: boolean;
  /** roles a caller needs; empty = loopback clients only */
  roles: readonly string[];
  /** default `/console` */
  path: string;
  /** trace records per second one process sends at most (over it, runs are sampled); default 50 */
  sample: number;
  /** bytes of one step's payload snapshot; default 2 KiB */
  snapshotBytes: number;
  /**
   * distributed mode: runner processes publish their traced runs on NATS while a console
   * watches (docs/console.md, Distributed mode); default false: nothing traced crosses the broker
   */
  natsTraces: boolean;
  /** key parts (or `/regex/`) masked in snapshots and settings besides the built-in ones; default none */
  mask: readonly string[];
}

/** The console's settings when the file sets none. */
export const DEFAULT_CONSOLE: ConsoleSettings = Object.freeze({
  enabled: true,
  roles: Object.freeze([]) as readonly string[],
  path: '/console',
  sample: 50,
  snapshotBytes: 2048,
  natsTraces: false,
  mask: Object.freeze([]) as readonly string[],
});

export interface NatsSystemSettings {
  type: 'nats';
  name: string;
  servers: readonly string[];
  ackWaitMs: number;
  maxDeliver: number;
  /** one connection attempt; default 2 s */
  connectTimeoutMs: number;
  /** how long past a saga's deadline a gateway waits for the runner's answer; default 2 s */
  runGraceMs: number;
  /** a JetStream publish waits this long to be stored; default 5 s */
  publishTimeoutMs: number;
  /** max_age of the events stream; default 1 h */
  eventsMaxAgeMs: number;
  /** max_age of the durable replies stream; default 10 min */
  repliesMaxAgeMs: number;
  /** how often a runner process advertises itself (a process silent for 3 intervals is gone); default 2 s */
  advertiseIntervalMs: number;
  user?: string;
  pass?: string;
  token?: string;
  prefix: string;
}

export interface HttpSystemSettings {
  type: 'http';
  name: string;
  baseUrl: string;
  timeoutMs: number;
  maxResponseSize: number;
  headers: Readonly<Record<string, string>>;
  allowPrivate: boolean;
  followRedirects: boolean;
}

export interface LocalSystemSettings {
  type: 'local';
  name: string;
}

export type SystemSettings = NatsSystemSettings | HttpSystemSettings | LocalSystemSettings;

export interface QuerySettings {
  sql?: string;
  filter?: Record<string, unknown>;
}

interface StateBase {
  alias: string;
  /** bytes of record data one list page holds at most (one record always fits); the compiler fills in 4 MiB, absent = the same */
  maxPageBytes?: number;
  /** JSON values one record, and one list page, holds at most (one record always fits); the compiler fills in 20,000 */
  maxValues?: number;
  queries: Readonly<Record<string, QuerySettings>>;
  /** absolute path of a JSON file of records `[{id, data}]` loaded when the state is empty */
  seed?: string;
}
export interface MemoryStateSettings extends StateBase {
  type: 'memory';
}
export interface SqliteStateSettings extends StateBase {
  type: 'sqlite';
  /** absolute path, or ":memory:" */
  file: string;
  table: string;
}
export interface PostgresStateSettings extends StateBase {
  type: 'postgres';
  url: string;
  table: string;
  poolSize: number;
}
export type StateSettings = MemoryStateSettings | SqliteStateSettings | PostgresStateSettings;

export type SecretsSettings = { from: 'env'; prefix: string } | { from: 'file'; file: string } | { from: 'none' };

/** A structural action or stream binding's `meta` layers: field path -> { default, override }. */
export type MetaLayers = Readonly<RawMetaLayers>;

export interface StructuralActionSettings {
  alias: string;
  handler?: string;
  meta: MetaLayers;
}

export interface StreamBindingSettings {
  name: string;
  handler?: string;
  /** system of the stream; default `defaultSystem`, else `local` */
  system: string;
  meta: MetaLayers;
}

/** Where a saga came from, to locate errors found after loading. */
export interface SagaSource {
  file: string;
  /** path of the saga inside that file, e.g. ['runners','todo','sagas',2] or [] or [0] */
  at: readonly (string | number)[];
}

export interface SagaDefinition extends RawSaga {
  source: SagaSource;
}

export interface RunnerSettings {
  name: string;
  deployment: string;
  /** built-in handler names, and absolute paths of user handler modules */
  handlers: readonly string[];
  sagas: readonly SagaDefinition[];
  /** the same sagas compiled into frozen plans (saga/graph.ts), in the same order */
  plans: readonly CompiledSaga[];
  actions: Readonly<Record<string, StructuralActionSettings>>;
  streams: Readonly<Record<string, StreamBindingSettings>>;
  /** distributed mode, no journal: how long outcomes stay readable at /api/status (NATS KV max_age); 0 = not kept; default 24 h */
  statusTtlMs: number;
  /** largest outcome value kept in the status bucket, in bytes; default 64 KiB */
  statusMaxBytes: number;
  /** steps one saga run may take before STEP_LIMIT_EXCEEDED; default 1000 */
  maxSteps: number;
  /** saga runs one request may start (its own, nested StartSaga runs at any depth) before RUN_BUDGET_EXCEEDED; default 100 */
  maxRunsPerRequest: number;
  /** alias of the state that journals saga progress; undefined = no journal */
  journal?: string;
  /** ms a finished run stays in the journal after its last write (journalRetention); default 7 days */
  journalRetentionMs: number;
  /** ms between two looks for journaled runs whose process is gone (resumeInterval); default 5 s */
  resumeIntervalMs: number;
  /** ms between two looks for due or decided waits (waitPoll); default 1 s */
  waitPollMs: number;
  /** ms a process holds a wait it took (waitLease); default 30 s */
  waitLeaseMs: number;
}

/** Everything a process needs, compiled from one configuration file. */
export interface Settings {
  /** absolute path of the configuration file */
  file: string;
  /** folder relative paths were resolved from */
  baseDir: string;
  gateway: GatewaySettings;
  systems: Readonly<Record<string, SystemSettings>>;
  defaultSystem?: string;
  states: Readonly<Record<string, StateSettings>>;
  values: Readonly<Record<string, string>>;
  secrets: SecretsSettings;
  runners: Readonly<Record<string, RunnerSettings>>;
  /** `observability` as written (the `OTEL_*` variables are read at start: systems/otel/config.ts); absent = none */
  observability?: { tracing?: TracingSettings };
}

/** `observability.tracing` as written; what is unset falls back to the `OTEL_*` variables (docs/tracing.md). */
export interface TracingSettings {
  enabled?: boolean;
  endpoint?: string;
  serviceName?: string;
  sampleRatio?: number;
  headers?: Readonly<Record<string, string>>;
}

export type { RawEventMeta };

/**
 * Default byte budget (`states.X.maxPageSize`) of one list page: a page stops early (with `next`, so nothing is lost)
 * once the JSON text of its records' data reaches it, which bounds what one list() holds in
 * memory whatever the records' sizes. The first record of a page always fits.
 */
export const DEFAULT_MAX_PAGE_BYTES = 4 * 1024 * 1024;
