import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { maskPatternIssue } from '../core/sensitive.js';
import { parseDuration, parseSize } from '../core/units.js';
import { compileApiRate, compileLimits, limitIssues } from './compile-limits.js';
import { compileOpenApi } from './compile-openapi.js';
import type { RawConfig } from './schema.js';
import { DEFAULT_CONSOLE, DEFAULT_IDEMPOTENCY_SETTINGS, DEFAULT_LONG_POLL, type GatewaySettings } from './settings.js';

/**
 * `gateway` with its documented defaults (docs/gateway.md), and the checks of the gateway
 * block that need nothing outside it (its apis' runners and its key state are checked by
 * compile.ts, which knows the runners and states).
 */

const ms = (v: unknown, fallback: number) => parseDuration(v) ?? fallback;
/** Shortest `gateway.auth.jwt.secret`, in bytes (UTF-8): 256 bits. */
export const MIN_HS_SECRET_BYTES = 32;

export function compileGateway(raw: RawConfig, baseDir: string): GatewaySettings {
  const g = raw.gateway ?? {};
  const jwt = g.auth?.jwt;
  const s = g.stream ?? {};
  return {
    ...(g.port !== undefined ? { port: g.port } : {}),
    // Loopback by default: `sagaway start` on a laptop must not serve the network; containers set 0.0.0.0.
    host: g.host ?? '127.0.0.1',
    trustProxy: g.trustProxy ?? false,
    auth: {
      ...(jwt
        ? {
            jwt: {
              ...(jwt.secret !== undefined ? { secret: jwt.secret } : {}),
              ...(jwt.publicKey !== undefined ? { publicKey: jwt.publicKey } : {}),
              ...(jwt.jwksUrl !== undefined ? { jwksUrl: jwt.jwksUrl } : {}),
              algorithms: jwt.algorithms ?? (jwt.secret !== undefined ? ['HS256'] : ['RS256', 'ES256', 'EdDSA']),
              ...(jwt.issuer !== undefined ? { issuer: jwt.issuer } : {}),
              ...(jwt.audience !== undefined ? { audience: jwt.audience } : {}),
              rolesClaim: jwt.rolesClaim ?? 'roles',
              principalClaim: jwt.principalClaim ?? 'sub',
              clockToleranceMs: ms(jwt.clockTolerance, 5000),
            },
          }
        : {}),
      apiKeys: (g.auth?.apiKeys ?? []).map((k) => ({
        name: k.name,
        sha256: k.sha256.toLowerCase(),
        roles: k.roles ?? [],
      })),
      cookie: g.auth?.cookie ?? 'sagaway_token',
      queryToken: g.auth?.queryToken ?? false,
    },
    apis: (g.apis ?? []).map((a) => ({
      path: a.path,
      runner: a.runner,
      ...(a.methods ? { methods: a.methods } : {}),
      roles: a.roles ?? [],
      public: a.public ?? false,
      ...(a.rate !== undefined ? { rate: compileApiRate(a.rate)! } : {}),
      ...(a.csp !== undefined ? { csp: a.csp } : {}),
      ...(a.stream?.share !== undefined ? { stream: { share: a.stream.share } } : {}),
    })),
    stream: {
      defaultWaitMs: ms(s.defaultWait, 1000),
      minWaitMs: ms(s.minWait, 50),
      maxWaitMs: ms(s.maxWait, 300_000),
      heartbeatMs: ms(s.heartbeat, 15_000),
      maxPerClient: s.maxPerClient ?? 10,
      maxStreams: s.maxStreams ?? 10_000,
      stallTimeoutMs: ms(s.stallTimeout, 30_000),
      maxEntries: s.maxEntries ?? 1000,
      maxBuffered: Math.max(1, parseSize(s.maxBuffered) ?? 1024 * 1024),
      share: s.share ?? 'caller',
      ...(s.cursorKey !== undefined ? { cursorKey: s.cursorKey } : {}),
      ...(s.maxLifetime !== undefined ? { maxLifetimeMs: ms(s.maxLifetime, 0) } : {}),
      longPoll: {
        holdMs: ms(s.longPoll?.hold, DEFAULT_LONG_POLL.holdMs),
        maxAge: Math.round(ms(s.longPoll?.maxAge, DEFAULT_LONG_POLL.maxAge * 1000) / 1000),
        staleWhileRevalidate: Math.round(
          ms(s.longPoll?.staleWhileRevalidate, DEFAULT_LONG_POLL.staleWhileRevalidate * 1000) / 1000,
        ),
      },
    },
    limits: compileLimits(g.limits),
    ...(g.static !== undefined ? { static: resolve(baseDir, g.static) } : {}),
    idempotency: {
      ttlMs: ms(g.idempotency?.ttl, DEFAULT_IDEMPOTENCY_SETTINGS.ttlMs),
      ...(g.idempotency?.state !== undefined ? { state: g.idempotency.state } : {}),
      maxBody: parseSize(g.idempotency?.maxBody) ?? DEFAULT_IDEMPOTENCY_SETTINGS.maxBody,
      maxKeysPerCaller: g.idempotency?.maxKeysPerCaller ?? DEFAULT_IDEMPOTENCY_SETTINGS.maxKeysPerCaller,
    },
    openapi: compileOpenApi(g.openapi, baseDir),
    validateResponses: g.validateResponses ?? false,
    console: {
      // Behind a proxy the console has no loopback-only mode (docs/console.md, Access): without
      // roles it is off unless the file asks for it (then compileSettings refuses the file).
      enabled: g.console?.enabled ?? (g.trustProxy && !g.console?.roles?.length ? false : DEFAULT_CONSOLE.enabled),
      roles: g.console?.roles ?? DEFAULT_CONSOLE.roles,
      path: g.console?.path ?? DEFAULT_CONSOLE.path,
      sample: g.console?.sample ?? DEFAULT_CONSOLE.sample,
      snapshotBytes: parseSize(g.console?.snapshot) ?? DEFAULT_CONSOLE.snapshotBytes,
      natsTraces: g.console?.natsTraces ?? DEFAULT_CONSOLE.natsTraces,
      mask: g.console?.mask ?? DEFAULT_CONSOLE.mask,
    },
    admin: { roles: g.admin?.roles ?? [] },
  };
}

/** Report what cannot work in a compiled gateway block, at paths under `gateway`. */
export function checkGateway(
  raw: RawConfig,
  gateway: GatewaySettings,
  report: (at: (string | number)[], message: string, severity?: 'error' | 'warning') => void,
): void {
  const at = (...path: (string | number)[]) => path;
  // The console's path must not hide a route of the gateway itself.
  const consolePath = gateway.console.path;
  if (/^\/(?:api|healthz|readyz|metrics)(?:\/|$)/.test(consolePath)) {
    report(at('console', 'path'), `"${consolePath}" is a route of the gateway itself`);
  }
  (raw.gateway?.console?.mask ?? []).forEach((entry, i) => {
    const issue = maskPatternIssue(entry);
    if (issue !== undefined) report(at('console', 'mask', i), issue);
  });
  const trusted = gateway.trustProxy;
  if (trusted !== false && gateway.console.roles.length === 0 && raw.gateway?.console?.enabled !== false) {
    if (raw.gateway?.console?.enabled === true) {
      report(
        at('console', 'enabled'),
        'behind a proxy (gateway.trustProxy) the console needs gateway.console.roles: a proxy on this ' +
          'machine would make every client look local',
      );
    } else {
      report(
        at('trustProxy'),
        'the console is off: behind a proxy it needs gateway.console.roles (or set gateway.console.enabled: false)',
        'warning',
      );
    }
  }
  if (Array.isArray(trusted)) {
    trusted.forEach((entry, i) => {
      if (!isProxyAddress(entry)) {
        report(
          at('trustProxy', i),
          `"${entry}" is not an address, a CIDR (10.0.0.0/8, fd00::/8) or loopback, linklocal, uniquelocal`,
        );
      }
    });
  }
  for (const [name, message] of limitIssues(gateway.limits, raw.gateway?.limits)) {
    report(at('limits', name), message);
  }
  if (raw.gateway?.auth?.jwt) {
    const jwt = raw.gateway.auth.jwt;
    const keys = [jwt.secret, jwt.publicKey, jwt.jwksUrl].filter((k) => k !== undefined).length;
    if (keys !== 1) report(at('auth', 'jwt'), 'set exactly one of secret, publicKey, jwksUrl');
    // RFC 7518 §3.2: an HMAC key at least as long as the hash (256 bits for HS256). A short one
    // can be found offline from any token it signed. The message never holds the secret.
    const secretBytes = jwt.secret === undefined ? undefined : Buffer.byteLength(jwt.secret, 'utf8');
    if (secretBytes !== undefined && secretBytes < MIN_HS_SECRET_BYTES) {
      report(
        at('auth', 'jwt', 'secret'),
        `the secret has ${secretBytes} bytes; HS256/384/512 needs at least ${MIN_HS_SECRET_BYTES} ` +
          '(RFC 7518 §3.2), e.g. `openssl rand -base64 48`',
      );
    }
  }
}

/** Names fastify's trustProxy (proxy-addr) accepts for address ranges. */
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * Whether a `gateway.trustProxy` entry is one fastify (proxy-addr) takes: an address, an address
 * with a prefix length (`/0` would trust every address, which is `true` without its one-hop
 * bound: refused), or a named range. Checked here so a typo is a located error, not a throw at start.
 */
export function isProxyAddress(entry: string): boolean {
  if (PROXY_RANGE_NAMES.has(entry)) return true;
  const slash = entry.lastIndexOf('/');
  const address = slash < 0 ? entry : entry.slice(0, slash);
  const family = isIP(address);
  if (family === 0) return false;
  if (slash < 0) return true;
  const prefix = entry.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefix)) return false;
  const bits = Number(prefix);
  return bits > 0 && bits <= (family === 4 ? 32 : 128);
}
