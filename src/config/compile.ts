import { DEFAULT_MAX_RECORD_VALUES } from '../core/json-values.js';
import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { isForbiddenKey } from '../core/path.js';
import { DEFAULT_MAX_RUNS_PER_REQUEST } from '../core/lineage.js';
import { maskPatternIssue } from '../core/sensitive.js';
import { parseDuration, parseSize } from '../core/units.js';
import { checkSaga, eventMetasOf, planSaga, type CompiledSaga } from '../saga/graph.js';
import { compileApiRate, compileLimits, limitIssues } from './compile-limits.js';
import { isLayerField } from './layer-fields.js';
import { apiOverlaps } from './api-overlap.js';
import { compileOpenApi } from './compile-openapi.js';
import type { RawConfig, RawEventMeta, RawRunner, RawState, RawSystem } from './schema.js';
import {
  DEFAULT_CONSOLE,
  DEFAULT_IDEMPOTENCY_SETTINGS,
  DEFAULT_MAX_PAGE_BYTES,
  type GatewaySettings,
  type RunnerSettings,
  type SagaDefinition,
  type SecretsSettings,
  type Settings,
  type StateSettings,
  type StreamBindingSettings,
  type StructuralActionSettings,
  type SystemSettings,
} from './settings.js';

/** Handler names that are built in (DESIGN §2); anything else in `handlers` is a module path. */
export const BUILTIN_HANDLER_NAMES: ReadonlySet<string> = new Set([
  'read',
  'write',
  'query',
  'rest',
  'action',
  'task',
  'saga',
]);

/** Reports an issue at a path of a file. */
export type Report = (
  file: string,
  at: readonly (string | number)[],
  message: string,
  severity?: 'error' | 'warning',
) => void;

const ms = (v: unknown, fallback: number) => parseDuration(v) ?? fallback;
/** Upper bound of runners.R.statusMaxSize: NATS' default max_payload. */
const MAX_STATUS_BYTES = 1024 * 1024;
/** Shortest `gateway.auth.jwt.secret`, in bytes (UTF-8): 256 bits. */
export const MIN_HS_SECRET_BYTES = 32;
/** How long a finished run stays in the journal unless `journalRetention` says otherwise: 7 days. */
export const DEFAULT_JOURNAL_RETENTION_MS = 7 * 24 * 3600_000;

/** Compile a validated config (sagas already loaded into `sagasByRunner`) into frozen settings. */
export function compileSettings(
  raw: RawConfig,
  file: string,
  baseDir: string,
  sagasByRunner: ReadonlyMap<string, SagaDefinition[]>,
  report: Report,
): Settings {
  const at = (...path: (string | number)[]) => path;
  const systems: Record<string, SystemSettings> = { local: { type: 'local', name: 'local' } };
  for (const [name, sys] of Object.entries(raw.systems ?? {})) systems[name] = compileSystem(name, sys as RawSystem);
  if (raw.defaultSystem !== undefined && !systems[raw.defaultSystem]) {
    report(file, at('defaultSystem'), `unknown system "${raw.defaultSystem}"`);
  }
  const states: Record<string, StateSettings> = {};
  for (const [alias, st] of Object.entries(raw.states ?? {})) {
    const compiled = compileState(alias, st as RawState, baseDir);
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(compiled.type === 'memory' ? 'ok' : compiled.table)) {
      report(file, at('states', alias), 'the alias is not a valid table name: set `table`');
    }
    states[alias] = compiled;
  }
  const gateway = compileGateway(raw, baseDir);
  const runners: Record<string, RunnerSettings> = {};
  for (const [name, r] of Object.entries(raw.runners ?? {})) {
    const sagas = sagasByRunner.get(name) ?? [];
    runners[name] = compileRunner(name, r, raw, systems, baseDir, sagas, file, report, gateway.limits.timeoutMs);
  }
  gateway.apis.forEach((api, i) => {
    if (!runners[api.runner]) report(file, at('gateway', 'apis', i, 'runner'), `unknown runner "${api.runner}"`);
  });
  for (const [i, message] of apiOverlaps(gateway.apis)) {
    const api = gateway.apis[i]!;
    report(file, at('gateway', 'apis', i, ...(api.methods ? ['methods'] : ['path'])), message);
  }
  const keyState = gateway.idempotency?.state;
  if (keyState !== undefined && !states[keyState]) {
    report(file, at('gateway', 'idempotency', 'state'), `unknown state "${keyState}"`);
  }
  // The console's path must not hide a route of the gateway itself.
  const consolePath = gateway.console?.path ?? DEFAULT_CONSOLE.path;
  if (/^\/(?:api|healthz|readyz|metrics)(?:\/|$)/.test(consolePath)) {
    report(file, at('gateway', 'console', 'path'), `"${consolePath}" is a route of the gateway itself`);
  }
  (raw.gateway?.console?.mask ?? []).forEach((entry, i) => {
    const issue = maskPatternIssue(entry);
    if (issue !== undefined) report(file, at('gateway', 'console', 'mask', i), issue);
  });
  const trusted = gateway.trustProxy;
  if (trusted !== false && gateway.console?.roles.length === 0 && raw.gateway?.console?.enabled !== false) {
    if (raw.gateway?.console?.enabled === true) {
      report(
        file,
        at('gateway', 'console', 'enabled'),
        'behind a proxy (gateway.trustProxy) the console needs gateway.console.roles: a proxy on this ' +
          'machine would make every client look local',
      );
    } else {
      report(
        file,
        at('gateway', 'trustProxy'),
        'the console is off: behind a proxy it needs gateway.console.roles (or set gateway.console.enabled: false)',
        'warning',
      );
    }
  }
  if (Array.isArray(trusted)) {
    trusted.forEach((entry, i) => {
      if (!isProxyAddress(entry)) {
        report(
          file,
          at('gateway', 'trustProxy', i),
          `"${entry}" is not an address, a CIDR (10.0.0.0/8, fd00::/8) or loopback, linklocal, uniquelocal`,
        );
      }
    });
  }
  for (const [name, message] of limitIssues(gateway.limits, raw.gateway?.limits)) {
    report(file, at('gateway', 'limits', name), message);
  }
  if (raw.gateway?.auth?.jwt) {
    const jwt = raw.gateway.auth.jwt;
    const keys = [jwt.secret, jwt.publicKey, jwt.jwksUrl].filter((k) => k !== undefined).length;
    if (keys !== 1) report(file, at('gateway', 'auth', 'jwt'), 'set exactly one of secret, publicKey, jwksUrl');
    // RFC 7518 §3.2: an HMAC key at least as long as the hash (256 bits for HS256). A short one
    // can be found offline from any token it signed. The message never holds the secret.
    const secretBytes = jwt.secret === undefined ? undefined : Buffer.byteLength(jwt.secret, 'utf8');
    if (secretBytes !== undefined && secretBytes < MIN_HS_SECRET_BYTES) {
      report(
        file,
        at('gateway', 'auth', 'jwt', 'secret'),
        `the secret has ${secretBytes} bytes; HS256/384/512 needs at least ${MIN_HS_SECRET_BYTES} ` +
          '(RFC 7518 §3.2), e.g. `openssl rand -base64 48`',
      );
    }
  }
  const values: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw.values ?? {})) if (!isForbiddenKey(k)) values[k] = String(v);
  return deepFreeze({
    file,
    baseDir,
    gateway,
    systems,
    ...(raw.defaultSystem !== undefined ? { defaultSystem: raw.defaultSystem } : {}),
    states,
    values,
    secrets: compileSecrets(raw, baseDir),
    runners,
  });
}

function compileGateway(raw: RawConfig, baseDir: string): GatewaySettings {
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
  };
}

function compileSystem(name: string, sys: RawSystem): SystemSettings {
  switch (sys.type) {
    case 'nats':
      return {
        type: 'nats',
        name,
        servers: sys.servers,
        ackWaitMs: ms(sys.ackWait, 30_000),
        maxDeliver: sys.maxDeliver ?? 5,
        connectTimeoutMs: ms(sys.connectTimeout, 2000),
        runGraceMs: ms(sys.runGrace, 2000),
        publishTimeoutMs: ms(sys.publishTimeout, 5000),
        eventsMaxAgeMs: ms(sys.eventsMaxAge, 60 * 60 * 1000),
        repliesMaxAgeMs: ms(sys.repliesMaxAge, 10 * 60 * 1000),
        ...(sys.user !== undefined ? { user: sys.user } : {}),
        ...(sys.pass !== undefined ? { pass: sys.pass } : {}),
        ...(sys.token !== undefined ? { token: sys.token } : {}),
        prefix: sys.prefix ?? 'sagaway',
      };
    case 'http':
      return {
        type: 'http',
        name,
        baseUrl: sys.baseUrl,
        timeoutMs: ms(sys.timeout, 10_000),
        maxResponseSize: parseSize(sys.maxResponseSize) ?? 10 * 1024 * 1024,
        headers: sys.headers ?? {},
        allowPrivate: sys.allowPrivate ?? false,
        followRedirects: sys.followRedirects ?? false,
      };
    case 'local':
      return { type: 'local', name };
  }
}

function compileState(alias: string, st: RawState, baseDir: string): StateSettings {
  const base = {
    alias,
    queries: st.queries ?? {},
    maxPageBytes: Math.max(1, parseSize(st.maxPageSize) ?? DEFAULT_MAX_PAGE_BYTES),
    maxValues: st.maxValues ?? DEFAULT_MAX_RECORD_VALUES,
    ...(st.seed !== undefined ? { seed: resolve(baseDir, st.seed) } : {}),
  };
  switch (st.type) {
    case 'memory':
      return { ...base, type: 'memory' };
    case 'sqlite':
      return {
        ...base,
        type: 'sqlite',
        file: st.file === ':memory:' ? st.file : resolve(baseDir, st.file),
        table: st.table ?? alias,
      };
    case 'postgres':
      return { ...base, type: 'postgres', url: st.url, table: st.table ?? alias, poolSize: st.poolSize ?? 10 };
  }
}

function compileSecrets(raw: RawConfig, baseDir: string): SecretsSettings {
  const s = raw.secrets;
  if (!s) return { from: 'env', prefix: 'SAGAWAY_SECRET_' };
  if (s.from === 'env') return { from: 'env', prefix: s.prefix ?? 'SAGAWAY_SECRET_' };
  return { from: 'file', file: resolve(baseDir, s.file) };
}

function compileRunner(
  name: string,
  r: RawRunner,
  raw: RawConfig,
  systems: Record<string, SystemSettings>,
  baseDir: string,
  sagas: SagaDefinition[],
  file: string,
  report: Report,
  defaultTimeoutMs: number,
): RunnerSettings {
  const handlers = (r.handlers ?? []).map((h, i) => {
    if (BUILTIN_HANDLER_NAMES.has(h)) return h;
    const abs = resolve(baseDir, h);
    if (!existsSync(abs)) report(file, ['runners', name, 'handlers', i], `handler module not found: ${h}`);
    return abs;
  });
  const actions: Record<string, StructuralActionSettings> = {};
  for (const [alias, a] of Object.entries(r.actions ?? {})) {
    for (const key of Object.keys(a.meta ?? {})) {
      if (!isLayerField(key)) {
        report(
          file,
          ['runners', name, 'actions', alias, 'meta', key],
          `"${key}" is not a setting actions may default or override`,
        );
      }
    }
    actions[alias] = { alias, ...(a.handler !== undefined ? { handler: a.handler } : {}), meta: a.meta ?? {} };
  }
  const streams: Record<string, StreamBindingSettings> = {};
  for (const [s, b] of Object.entries(r.streams ?? {})) {
    const system = b.system ?? raw.defaultSystem ?? 'local';
    if (!systems[system]) report(file, ['runners', name, 'streams', s, 'system'], `unknown system "${system}"`);
    for (const key of Object.keys(b.meta ?? {})) {
      if (!isLayerField(key)) {
        report(
          file,
          ['runners', name, 'streams', s, 'meta', key],
          `"${key}" is not a setting streams may default or override`,
        );
      }
    }
    streams[s] = { name: s, ...(b.handler !== undefined ? { handler: b.handler } : {}), system, meta: b.meta ?? {} };
  }
  const runner: RunnerSettings = {
    name,
    deployment: r.deployment ?? '1',
    handlers,
    sagas,
    plans: [],
    actions,
    streams,
    statusTtlMs: ms(r.statusTtl, 24 * 3600_000),
    statusMaxBytes: Math.min(MAX_STATUS_BYTES, Math.max(1024, parseSize(r.statusMaxSize) ?? 64 * 1024)),
    maxSteps: r.maxSteps ?? 1000,
    maxRunsPerRequest: r.maxRunsPerRequest ?? DEFAULT_MAX_RUNS_PER_REQUEST,
    ...(r.journal !== undefined ? { journal: r.journal } : {}),
    journalRetentionMs: ms(r.journalRetention, DEFAULT_JOURNAL_RETENTION_MS),
  };
  if (r.journal !== undefined && !Object.hasOwn(raw.states ?? {}, r.journal)) {
    report(file, ['runners', name, 'journal'], `unknown state "${r.journal}"`);
  }
  return { ...runner, plans: checkRunnerSagas(runner, raw, systems, report, defaultTimeoutMs) };
}

/**
 * Graph checks of every saga, and the event-step rules that need the runner around them; then
 * the compile stage: each saga without errors becomes its frozen plan (a configuration with
 * errors is refused by the loader, so no runner ever sees a partial list).
 */
function checkRunnerSagas(
  runner: RunnerSettings,
  raw: RawConfig,
  systems: Record<string, SystemSettings>,
  report: Report,
  defaultTimeoutMs: number,
): CompiledSaga[] {
  const plans: CompiledSaga[] = [];
  const ids = new Map<string, SagaDefinition>();
  for (const saga of runner.sagas) {
    const where = (...p: (string | number)[]) => [...saga.source.at, ...p];
    if (ids.has(saga.id))
      report(saga.source.file, where('id'), `duplicate saga id "${saga.id}" in runner "${runner.name}"`);
    ids.set(saga.id, saga);
    const issues = checkSaga(saga);
    for (const issue of issues) report(saga.source.file, where(...issue.at), issue.message, issue.severity);
    saga.steps.forEach((step, i) => {
      for (const { meta, at } of eventMetasOf(step)) {
        checkEventMeta(meta, runner, raw, systems, (p, m) =>
          report(saga.source.file, where('steps', i, ...at, ...p), m),
        );
      }
    });
    if (!issues.some((i) => i.severity === 'error')) plans.push(planSaga(saga, defaultTimeoutMs));
  }
  // onFail names a saga of the same runner (checked once every id is known).
  for (const saga of runner.sagas) {
    const target = saga.onFail?.saga;
    if (target !== undefined && !ids.has(target))
      report(saga.source.file, [...saga.source.at, 'onFail', 'saga'], `no saga "${target}" in runner "${runner.name}"`);
  }
  return plans;
}

function checkEventMeta(
  meta: RawEventMeta,
  runner: RunnerSettings,
  raw: RawConfig,
  systems: Record<string, SystemSettings>,
  report: (at: (string | number)[], message: string) => void,
): void {
  const stream = meta.stream ?? 'local';
  if (stream !== 'local') {
    const system = meta.system ?? raw.defaultSystem ?? 'local';
    if (!systems[system]) report(['system'], `unknown system "${system}"`);
    return;
  }
  // DESIGN §6.1: on `local` the handler must be explicit (a structural action may supply it).
  const structural = Object.hasOwn(runner.actions, meta.action) ? runner.actions[meta.action] : undefined;
  const handler =
    meta.handler ??
    structural?.handler ??
    (structural?.meta['handler']?.override as string | undefined) ??
    (structural?.meta['handler']?.default as string | undefined);
  if (handler === undefined) {
    report(['handler'], 'required when stream is local (HANDLER_REQUIRED)');
    return;
  }
  if (BUILTIN_HANDLER_NAMES.has(handler) && !runner.handlers.includes(handler)) {
    report(['handler'], `handler "${handler}" is not listed in runners.${runner.name}.handlers`);
  }
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
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
