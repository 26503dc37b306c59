import { Type } from '@sinclair/typebox';
import { DurationOf, DurationSchema, HttpMethod, NameOf, SizeOf, SizeSchema, strict } from '../core/schema-kit.js';
import { OpenApiSchema, ValidateResponsesSchema } from './openapi-schema.js';

/** The `gateway` section of the configuration format (schema.ts assembles the file). */

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
          maxLifetime: Type.Optional(
            DurationOf(
              'close an SSE stream after this long, with a retry hint and a resumable id, so that ' +
                'caches that collapse new requests take part; default off',
            ),
          ),
          longPoll: Type.Optional(
            Type.Object(
              {
                hold: Type.Optional(
                  DurationOf(
                    'longest hold of a long-poll request with nothing new (within the feed wait); default 20s',
                  ),
                ),
                maxAge: Type.Optional(
                  DurationOf('max-age of a cacheable long-poll answer (whole seconds); default 5s'),
                ),
                staleWhileRevalidate: Type.Optional(
                  DurationOf('stale-while-revalidate of a cacheable long-poll answer (whole seconds); default 10s'),
                ),
              },
              { ...strict, description: 'the long-poll form (?live=long-poll&offset=): holds and caching' },
            ),
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
    admin: Type.Optional(
      Type.Object(
        {
          roles: Type.Optional(
            Type.Array(Type.String({ minLength: 1, maxLength: 128 }), {
              maxItems: 64,
              description:
                'roles a caller needs to list, redrive and abort runs (same auth as the APIs); absent = loopback clients only (none behind trustProxy), others get 404',
            }),
          ),
        },
        { ...strict, description: 'who may operate runs: GET /api/runs, redrive, abort (docs/runs.md)' },
      ),
    ),
  },
  { ...strict, description: 'the HTTP front: port, host, auth, apis, stream, limits' },
);

// ---------------------------------------------------------------- the file
