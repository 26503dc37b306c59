import { normalizeIP } from '@fastify/rate-limit';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiSettings, LimitSettings, RateSettings } from '../../../config/settings.js';
import { callerKey } from '../../../core/caller.js';
import type { CompiledApi } from '../../apis/api-map.js';
import type { OnUnauthorized, RequestCheck } from '../../forms/admit.js';
import { problemFor, sendProblem } from './problem.js';
import { loadStore, type Store } from './rate-store.js';

/**
 * Per-client rate limits of both API forms (DESIGN §10, docs/gateway.md "Rate limits"), counted
 * in fixed windows by @fastify/rate-limit's stores: its LRU store in this process, or its Redis
 * store (one Lua INCR+PEXPIRE per request) when `limits.rate.redis` is set, so that several
 * gateway replicas share one count. The stores are used directly (rate-store.ts loads them and
 * checks their shape at start) rather than through the plugin's hook: ours is callback-style (no
 * promise per request with the local store), keys by the authenticated principal that our own
 * auth check found, and answers with our problem+json and the IETF RateLimit / RateLimit-Policy
 * headers.
 *
 * The client is the principal, else the source address (IPv6 by /64, as the plugin does); the
 * same rule as the stream limits. An API with its own `rate` is counted apart from the others;
 * every other API shares the gateway's count. A stream counts once per connection, so each
 * reconnect counts too.
 */

/** Most clients counted at once in this process (the least recently seen are forgotten first). */
export const LOCAL_CLIENTS = 50_000;

/** A compiled limit: its count's key prefix and its precomputed header. */
interface Policy {
  readonly max: number;
  readonly windowMs: number;
  /** requests after which the RateLimit headers are sent (half the quota) */
  readonly half: number;
  readonly name: string;
  readonly keyPrefix: string;
  /** the RateLimit-Policy header: `"name";q=max;w=seconds` */
  readonly header: string;
}

/** A Redis connection with the one call the gateway makes on close. */
interface RedisClient {
  quit(): Promise<unknown>;
  disconnect(): void;
}

function policy(rate: RateSettings, name: string, keyPrefix: string): Policy {
  const w = Math.max(1, Math.ceil(rate.windowMs / 1000));
  return {
    max: rate.max,
    windowMs: rate.windowMs,
    half: Math.floor(rate.max / 2),
    name,
    keyPrefix,
    header: `"${name}";q=${rate.max};w=${w}`,
  };
}

/** An sf-string for a policy name: printable ASCII without quotes or backslashes. */
function policyName(prefix: string): string {
  return prefix.replace(/[^\x20-\x7e]|["\\]/g, '_');
}

/** Let a request through: to `next`, else back to fastify. */
function passOn(request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void, next?: RequestCheck): void {
  if (next === undefined) done();
  else next(request, reply, done);
}

/** The per-client rate limiter of one gateway. */
export class RateLimiter {
  private readonly global: Policy | undefined;
  private readonly byApi = new Map<CompiledApi, Policy | null>();
  private lastWarning = 0;

  /** Whether any request can be limited at all (else the hook is not installed). */
  readonly active: boolean;

  private constructor(
    limits: LimitSettings,
    apis: readonly ApiSettings[],
    private readonly store: Store,
    private readonly log: FastifyBaseLogger,
    private readonly redis?: RedisClient,
  ) {
    this.global = limits.rate && policy(limits.rate, 'default', '');
    this.active = this.global !== undefined || apis.some((a) => a.rate);
  }

  /** A limiter for `limits.rate` and the APIs' own (with Redis when `limits.rate.redis` is set). */
  static async create(
    limits: LimitSettings,
    apis: readonly ApiSettings[],
    log: FastifyBaseLogger,
  ): Promise<RateLimiter> {
    const redisUrl = limits.rate?.redis;
    if (redisUrl === undefined) {
      const LocalStore = loadStore('LocalStore');
      return new RateLimiter(limits, apis, new LocalStore(false, false, LOCAL_CLIENTS), log);
    }
    const RedisStore = loadStore('RedisStore');
    // Loaded only when configured (heavy clients are imported lazily).
    const { Redis } = await import('ioredis');
    // No offline queue and a short command timeout: while Redis is away, requests are served
    // uncounted at once rather than queued behind it.
    const client = new Redis(redisUrl, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: 1000,
      connectTimeout: 2000,
    });
    client.on('error', () => undefined); // reported when a count fails
    await client.connect().catch((err: Error) => log.warn({ err: err.message }, 'rate limit: Redis unreachable'));
    return new RateLimiter(limits, apis, new RedisStore(false, false, client, 'sagaway:rate:'), log, client);
  }

  /** The policy of an API: its own, none (`rate: false`), or the gateway's. */
  private policyOf(api: CompiledApi | undefined): Policy | undefined {
    if (api === undefined) return this.global;
    let p = this.byApi.get(api);
    if (p === undefined) {
      const own = api.settings.rate;
      p = own === false ? null : own ? policy(own, policyName(api.prefix), `${api.prefix}|`) : (this.global ?? null);
      this.byApi.set(api, p);
    }
    return p ?? undefined;
  }

  /**
   * onRequest hook (after the API check and auth): count the request against its client, set
   * the RateLimit headers, answer 429 RATE_LIMITED over the limit.
   */
  readonly hook = (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void =>
    this.count(request, reply, done, undefined);

  /** The hook, then `next` for a request it lets through (one fastify hook instead of two). */
  followedBy(next: RequestCheck): RequestCheck {
    return (request, reply, done) => this.count(request, reply, done, next);
  }

  private count(
    request: FastifyRequest,
    reply: FastifyReply,
    done: (err?: Error) => void,
    next: RequestCheck | undefined,
  ): void {
    const admitted = request.sagaway;
    const p = this.policyOf(admitted?.api);
    if (p === undefined) return passOn(request, reply, done, next);
    const key = p.keyPrefix + callerKey(admitted?.principal, sourceOf(request));
    this.store.incr(
      key,
      (err, res) => {
        if (err || !res) {
          // Fail open: an unreachable Redis must not take the API down with it.
          this.warn(err);
          return passOn(request, reply, done, next);
        }
        // The RateLimit headers go out once a client has used half its quota (and on the 429):
        // a client far from the limit has nothing to act on, and the two headers on every
        // response measured ≈ 9% of the one-shot request's CPU (bench/gateway/limits-cost.mjs).
        if (res.current <= p.half) return passOn(request, reply, done, next);
        const seconds = Math.max(0, Math.ceil(res.ttl / 1000));
        reply.header('ratelimit-policy', p.header);
        reply.header('ratelimit', `"${p.name}";r=${Math.max(0, p.max - res.current)};t=${seconds}`);
        if (res.current <= p.max) return passOn(request, reply, done, next);
        sendProblem(
          reply,
          problemFor('RATE_LIMITED', request.id, `more than ${p.max} requests in ${p.windowMs / 1000} s`),
          { 'retry-after': String(seconds) },
        );
      },
      p.windowMs,
      p.max,
    );
  }

  /** `refused`, for the guards that check credentials (admit, the console's and the run routes'); undefined when nothing is limited. */
  get onRefused(): OnUnauthorized | undefined {
    return this.active ? (request, reply, api, send) => this.refused(request, reply, api, send) : undefined;
  }

  /**
   * A request refused for its credential (401) still counts, against its source address: without
   * this, wrong API keys or forged tokens could be tried without end (each one a verification,
   * a JWKS look-up for RS/ES tokens). `send` answers the 401 while the address is within the
   * limit; over it the answer is the 429.
   */
  refused(request: FastifyRequest, reply: FastifyReply, api: CompiledApi, send: () => void): void {
    const p = this.policyOf(api);
    if (p === undefined) return send();
    this.store.incr(
      p.keyPrefix + callerKey(undefined, sourceOf(request)),
      (err, res) => {
        if (err || !res || res.current <= p.max) return send();
        const seconds = String(Math.max(0, Math.ceil(res.ttl / 1000)));
        sendProblem(
          reply,
          problemFor('RATE_LIMITED', request.id, `more than ${p.max} requests in ${p.windowMs / 1000} s`),
          {
            'retry-after': seconds,
            'ratelimit-policy': p.header,
          },
        );
      },
      p.windowMs,
      p.max,
    );
  }

  private warn(err: Error | null): void {
    const now = Date.now();
    if (now - this.lastWarning < 10_000) return;
    this.lastWarning = now;
    this.log.warn({ err: err?.message }, 'rate limit not counted (store unavailable): request served');
  }

  /** Close the Redis connection, if any. */
  async close(): Promise<void> {
    if (!this.redis) return;
    await this.redis.quit().catch(() => this.redis!.disconnect());
  }
}

/**
 * The address a request is counted against: IPv6 by its /64 (one host owns the whole prefix).
 * A client that hung up before its checks ran (a slow JWKS fetch) has no address any more:
 * counted as '', never a throw.
 */
function sourceOf(request: FastifyRequest): string {
  const ip = request.ip ?? '';
  return ip.includes(':') ? normalizeIP(ip, 64) : ip;
}
