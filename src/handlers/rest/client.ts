import { Agent, type Dispatcher } from 'undici';
import type { HttpSystemSettings } from '../../config/settings.js';
import { SagawayError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { assertUrlAllowed, SsrfBlockedError, type AddressPolicy } from './address-policy.js';
import { guardedConnector, type ConnectFn, type LookupFn } from './connector.js';
import type { RestRequest } from './request.js';
import { discard, parseBody, readLimited } from './response.js';

/**
 * One HTTP client per `http` system: an undici Agent whose every connection goes through the
 * SSRF-guarded connector, plus the call loop (timeout, redirects, size cap, status mapping).
 * Proxies from the environment are deliberately not used: a proxy would connect on our behalf
 * to addresses the policy never saw.
 */

/** Options of a RestClient; the lookup and connect steps are injectable for tests. */
export interface RestClientOptions {
  /** DNS resolution; default the system resolver */
  lookup?: LookupFn;
  /** opens a socket to a checked address; default undici's connector */
  connect?: ConnectFn;
  /** redirect hops followed at most when the system allows redirects; default 5 */
  maxRedirects?: number;
  /** trusted CA certificates (PEM); default Node's store (plus NODE_EXTRA_CA_CERTS) */
  ca?: string | Buffer | readonly (string | Buffer)[];
}

/** What a call answered. */
export interface RestResponse {
  status: number;
  /** JSON when the content type is JSON, else text; null when the body is empty */
  body: unknown;
}

const REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

function upstream(message: string, http = 502, cause?: unknown): SagawayError {
  return new SagawayError('UPSTREAM_ERROR', message, cause === undefined ? { http } : { http, cause });
}

/**
 * The base a system's calls stay under: its origin and its base path without trailing slashes
 * ("" when the base URL is the origin's root). A loop, not a regex: /\/+$/ is quadratic.
 */
export function systemBase(baseUrl: string): { origin: string; path: string } {
  const base = new URL(baseUrl);
  let end = base.pathname.length;
  while (end > 0 && base.pathname.charCodeAt(end - 1) === 0x2f) end--;
  return { origin: base.origin, path: base.pathname.slice(0, end) };
}

/** Whether `url` is the system's base URL or below it (same origin, under the base path). */
export function withinBase(url: URL, base: { origin: string; path: string }): boolean {
  if (url.origin !== base.origin) return false;
  return base.path === '' || url.pathname === base.path || url.pathname.startsWith(`${base.path}/`);
}

/**
 * The request for the next hop of a redirect, as browsers and fetch do it for the method and
 * body. Every header goes along, credentials included: a hop is only followed when it stays
 * under the system's base URL (checked by the caller), i.e. it reaches the service that the
 * configuration's credentials are meant for, and nothing else.
 */
function nextHop(current: RestRequest, status: number, location: URL): RestRequest {
  const headers: Record<string, string> = { ...current.headers };
  const toGet =
    status === 303 ? current.method !== 'HEAD' : (status === 301 || status === 302) && current.method === 'POST';
  if (toGet || current.body === undefined) {
    delete headers['content-type'];
    return { method: toGet ? 'GET' : current.method, url: location, headers };
  }
  return { method: current.method, url: location, headers, body: current.body };
}

/** An SSRF-guarded HTTP client for one `http` system. */
export class RestClient {
  private readonly agent: Agent;
  private readonly policy: AddressPolicy;
  private readonly maxRedirects: number;
  private readonly base: { origin: string; path: string };

  constructor(
    private readonly system: HttpSystemSettings,
    options: RestClientOptions = {},
  ) {
    this.policy = { allowPrivate: system.allowPrivate };
    this.maxRedirects = options.maxRedirects ?? 5;
    this.base = systemBase(system.baseUrl);
    const connect = guardedConnector({
      policy: this.policy,
      connectTimeoutMs: system.timeoutMs,
      ...(options.lookup ? { lookup: options.lookup } : {}),
      ...(options.connect ? { connect: options.connect } : {}),
      ...(options.ca !== undefined ? { ca: options.ca } : {}),
    });
    this.agent = new Agent({ connect, keepAliveTimeout: 4_000 });
  }

  /**
   * Send `request`, following redirects only when the system allows them. Throws SagawayError:
   * SSRF_BLOCKED, UPSTREAM_TIMEOUT, UPSTREAM_TOO_LARGE or UPSTREAM_ERROR (with the upstream
   * status when it answered >= 400, else 502).
   */
  async send(request: RestRequest, signal: AbortSignal, log?: Logger): Promise<RestResponse> {
    // One controller, one timer, and a listener on the caller's signal that is removed when the
    // call ends: the caller's signal lives as long as the saga run, which may make many calls.
    const call = new AbortController();
    // setTimeout fires at once for delays over 2^31-1 ms; clamp rather than time out immediately
    const timer = setTimeout(() => call.abort(new Error('timeout')), Math.min(this.system.timeoutMs, 2_147_483_647));
    const onAbort = (): void => call.abort(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    const started = Date.now();
    try {
      const res = await this.exchange(request, call.signal);
      log?.debug(
        { system: this.system.name, method: request.method, status: res.status, ms: Date.now() - started },
        'rest call',
      );
      return res;
    } catch (err) {
      throw this.translate(err, call.signal.aborted && !signal.aborted, signal, log);
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    }
  }

  /** Close pooled connections. */
  async close(): Promise<void> {
    await this.agent.close();
  }

  private async exchange(first: RestRequest, signal: AbortSignal): Promise<RestResponse> {
    let current = first;
    for (let hop = 0; ; hop++) {
      assertUrlAllowed(current.url, this.policy);
      const res = await this.agent.request({
        origin: current.url.origin,
        path: current.url.pathname + current.url.search,
        method: current.method as Dispatcher.HttpMethod,
        headers: current.headers,
        body: current.body ?? null,
        signal,
      });
      const location = res.headers['location'];
      if (REDIRECTS.has(res.statusCode) && typeof location === 'string') {
        discard(res.body);
        if (!this.system.followRedirects)
          throw upstream(`upstream answered ${res.statusCode} (redirects are not followed for this system)`);
        if (hop >= this.maxRedirects) throw upstream(`upstream redirected more than ${this.maxRedirects} times`);
        let target: URL;
        try {
          target = new URL(location, current.url);
        } catch {
          throw upstream('upstream redirected to an invalid URL');
        }
        if (current.url.protocol === 'https:' && target.protocol === 'http:')
          throw upstream('upstream redirected from https to http');
        // A redirect may not take the call (and the system's credentials) out of the system: not
        // to another origin, and not to another path of the same host outside the base path
        // (another application there). Refused before the hop is resolved or connected.
        if (!withinBase(target, this.base)) throw new SsrfBlockedError('redirect-escape');
        current = nextHop(current, res.statusCode, target);
        continue;
      }
      if (res.statusCode >= 400) {
        discard(res.body);
        // a non-standard status above 599 cannot be an HTTP answer of ours: 502
        throw upstream(`upstream answered ${res.statusCode}`, res.statusCode <= 599 ? res.statusCode : 502);
      }
      const bytes = await readLimited(res.body, res.headers['content-length'], this.system.maxResponseSize);
      return { status: res.statusCode, body: parseBody(bytes, res.headers['content-type']) };
    }
  }

  private translate(err: unknown, timedOut: boolean, signal: AbortSignal, log?: Logger): SagawayError {
    const system = this.system.name;
    const ssrf = findSsrf(err);
    if (ssrf) {
      log?.warn({ system, reason: ssrf.reason }, 'rest call refused by the SSRF policy');
      return ssrf;
    }
    if (err instanceof SagawayError) {
      log?.debug({ system, code: err.code, http: err.http }, 'rest call failed');
      return err;
    }
    if (timedOut)
      return new SagawayError('UPSTREAM_TIMEOUT', `upstream did not answer within ${this.system.timeoutMs} ms`, {
        http: 504,
      });
    if (signal.aborted)
      return new SagawayError('UPSTREAM_TIMEOUT', 'the call was cancelled before upstream answered', { http: 504 });
    const code = (err as { code?: unknown } | null)?.code;
    log?.warn({ system, code: typeof code === 'string' ? code : undefined }, 'rest call failed');
    return upstream('upstream could not be reached', 502, err);
  }
}

/** The SSRF refusal inside an error undici may have wrapped. */
function findSsrf(err: unknown): SsrfBlockedError | undefined {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof SsrfBlockedError) return e;
  }
  return undefined;
}
