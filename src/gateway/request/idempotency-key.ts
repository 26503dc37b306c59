import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { callerKey } from '../../core/caller.js';
import type { SagaResult } from '../../core/types.js';
import { DEFAULT_IDEMPOTENCY_SETTINGS, type Settings } from '../../config/settings.js';
import type { Logger } from '../../core/logger.js';
import {
  createRequestKeyStore,
  type Claim,
  type RequestKeyStore,
  type StoredResponse,
} from '../../states/request-keys/index.js';
import type { Admitted } from '../context.js';
import { problemFor, sendProblem } from '../http/problem.js';

/**
 * `Idempotency-Key` requests (IETF draft-ietf-httpapi-idempotency-key-header; docs/gateway.md,
 * Idempotency keys). A POST, PUT, PATCH or DELETE of the one-shot form that carries the header
 * takes the key for its caller before the saga runs; its response is stored, and the same
 * request again gets that response back (`Idempotent-Replayed: true`) instead of a second run.
 *
 * - Scope: the row id is a hash of the caller and the key, so one caller's keys are invisible to
 *   every other (they can neither replay, nor block, nor even detect them). Anonymous callers of
 *   a public API share one scope per API prefix: their keys must be unguessable (a UUID).
 * - Fingerprint: method, URL (path, extension and query) and the parsed JSON body. The same key
 *   for another request is 422 IDEMPOTENCY_KEY_MISMATCH.
 * - While the first request runs: 409 IDEMPOTENCY_KEY_IN_USE with Retry-After. The claim is a
 *   lock that ends at the request's timeout plus `LOCK_GRACE_MS`: a gateway that crashed mid-run
 *   leaves a key that is free again after that.
 * - A keyed run is not stopped when its client goes away: its outcome is still stored, so the
 *   client's retry gets it (or 409 while it runs).
 * - Quota: one caller holds at most `maxKeysPerCaller` live keys (each may keep a stored body for
 *   `ttl`); a new key past it is 429 IDEMPOTENCY_KEYS_EXHAUSTED and the request does not run. The
 *   caller's existing keys are still replayed. Anonymous callers count per source address.
 * - Not stored (the key is released, so a retry runs again): RUNNER_UNAVAILABLE and
 *   SERVICE_UNAVAILABLE of the run itself (not of one of its steps), where no runner took the
 *   request. Every other outcome, failures included, is stored.
 */

/** Methods whose requests a key applies to. */
const KEYED_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Longest key, in characters. */
export const MAX_KEY_LENGTH = 255;
/** How long past the request's own timeout an unfinished claim holds its key. */
export const LOCK_GRACE_MS = 10_000;
/** Response headers a replay repeats. */
const STORED_HEADERS = ['content-type', 'content-security-policy'] as const;
/** Codes of a run that never started when no step of it failed: no runner took it. */
const NOT_RUN = new Set(['RUNNER_UNAVAILABLE', 'SERVICE_UNAVAILABLE']);
/** Retry-After of IDEMPOTENCY_KEYS_EXHAUSTED, in seconds: keys free up as they expire, not at once. */
const EXHAUSTED_RETRY_S = 60;
/** Visible ASCII and space: what an sf-string may hold. */
const KEY_CHARS = /^[\x20-\x7E]+$/;

/** Settings of idempotency keys (gateway.idempotency). */
export interface IdempotencyOptions {
  ttlMs: number;
  /** largest response body stored; a larger one is stored without it */
  maxBody: number;
  /** timeout of one request (gateway.limits.timeout): the claim's lock is this plus LOCK_GRACE_MS */
  timeoutMs: number;
  /** live keys one caller may hold (gateway.idempotency.maxKeysPerCaller) */
  maxKeysPerCaller: number;
  /** the clock; default Date.now */
  now?: () => number;
}

/** A key taken by a request that is running. */
interface Pending {
  id: string;
  owner: string;
  /** the saga never started: the key is released instead of storing the answer */
  notRun?: boolean;
}

const REPEATED = { invalid: 'the request has more than one Idempotency-Key header' };

/**
 * Whether a header line comes more than once in `rawHeaders` (name, value, name, value, ...).
 * Node joins repeated unknown headers into one value (`a, b`), which would pass as a key.
 */
export function headerRepeated(rawHeaders: readonly string[], lowerName: string): boolean {
  let seen = false;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length !== lowerName.length || name.toLowerCase() !== lowerName) continue;
    if (seen) return true;
    seen = true;
  }
  return false;
}

/**
 * The key of a request: undefined when it has none, `{ invalid }` (saying why) when the header is
 * malformed or comes twice (`rawHeaders`, when given, tells: Node has joined the copies by then).
 */
export function parseIdempotencyKey(
  header: string | string[] | undefined,
  rawHeaders?: readonly string[],
): string | undefined | { invalid: string } {
  if (header === undefined) return undefined;
  if (Array.isArray(header)) return REPEATED;
  if (rawHeaders !== undefined && headerRepeated(rawHeaders, 'idempotency-key')) return REPEATED;
  let key = header;
  // The draft defines the field as a structured-field string ("..."); a bare token is accepted too.
  if (key.length >= 2 && key.startsWith('"') && key.endsWith('"')) {
    key = key.slice(1, -1);
    if (/(?:^|[^\\])"/.test(key)) return { invalid: 'the Idempotency-Key is not a valid string' };
    key = key.replace(/\\(["\\])/g, '$1');
  }
  if (key === '') return { invalid: 'the Idempotency-Key is empty' };
  if (key.length > MAX_KEY_LENGTH)
    return { invalid: `the Idempotency-Key is longer than ${MAX_KEY_LENGTH} characters` };
  if (!KEY_CHARS.test(key)) return { invalid: 'the Idempotency-Key holds characters other than visible ASCII' };
  return key;
}

/**
 * The idempotency keys of a gateway, with the store `gateway.idempotency.state` names, opened.
 * A database that is down at start is opened again by the first keyed request. Defaults fill
 * in for settings made by code (embedding programs, tests) without `idempotency` or `states`.
 */
export async function openIdempotencyKeys(settings: Settings, log: Logger): Promise<IdempotencyKeys> {
  const given = settings.gateway.idempotency;
  const alias = given?.state;
  const store = await createRequestKeyStore(alias === undefined ? undefined : settings.states?.[alias], log);
  await store
    .init()
    .catch((err: unknown) => log.warn({ err, state: alias }, 'idempotency key store unavailable at start'));
  const { ttlMs, maxBody, maxKeysPerCaller } = { ...DEFAULT_IDEMPOTENCY_SETTINGS, ...given };
  return new IdempotencyKeys(store, {
    ttlMs,
    maxBody,
    maxKeysPerCaller,
    timeoutMs: settings.gateway.limits.timeoutMs,
  });
}

/** The idempotency keys of one gateway. */
export class IdempotencyKeys {
  private readonly pending = new WeakMap<FastifyRequest, Pending>();
  private readonly now: () => number;

  constructor(
    private readonly store: RequestKeyStore,
    private readonly options: IdempotencyOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  /**
   * Take the request's key, or answer it: a replay, 409, 422, 400, or 503 when the store cannot
   * be reached. Returns whether the request should run (true also when it carries no key).
   */
  async begin(request: FastifyRequest, reply: FastifyReply, admitted: Admitted): Promise<boolean> {
    if (!KEYED_METHODS.has(request.method)) return true;
    const key = parseIdempotencyKey(request.headers['idempotency-key'], request.raw.rawHeaders);
    if (key === undefined) return true;
    if (typeof key !== 'string') {
      sendProblem(reply, problemFor('IDEMPOTENCY_KEY_INVALID', request.id, key.invalid));
      return false;
    }
    const id = rowId(admitted, request.ip, key);
    const now = this.now();
    let claim: Claim;
    try {
      const quota = { scope: quotaScope(admitted, request.ip), max: this.options.maxKeysPerCaller };
      const lockUntil = now + this.options.timeoutMs + LOCK_GRACE_MS;
      claim = await this.store.claim(id, fingerprint(request), now, lockUntil, quota);
    } catch (err) {
      request.log.error({ err }, 'idempotency key store failed');
      sendProblem(reply, problemFor('STATE_UNAVAILABLE', request.id, 'the idempotency key store is not available'));
      return false;
    }
    switch (claim.kind) {
      case 'claimed':
        this.pending.set(request, { id, owner: claim.owner });
        return true;
      case 'running':
        sendProblem(
          reply,
          problemFor('IDEMPOTENCY_KEY_IN_USE', request.id, 'a request with this Idempotency-Key is still running'),
          { 'retry-after': '1' },
        );
        return false;
      case 'mismatch':
        sendProblem(
          reply,
          problemFor('IDEMPOTENCY_KEY_MISMATCH', request.id, 'this Idempotency-Key was used for a different request'),
        );
        return false;
      case 'done':
        replay(reply, claim.response);
        return false;
      case 'exhausted':
        sendProblem(
          reply,
          problemFor(
            'IDEMPOTENCY_KEYS_EXHAUSTED',
            request.id,
            `this caller holds ${this.options.maxKeysPerCaller} Idempotency-Keys already; a new one is taken when one expires`,
          ),
          { 'retry-after': String(EXHAUSTED_RETRY_S) },
        );
        return false;
    }
  }

  /** Whether the request holds a key (its run outlives its client: the outcome is stored). */
  holdsKey(request: FastifyRequest): boolean {
    return this.pending.has(request);
  }

  /** Note the run's result: one that never started (no runner took it) is not stored. */
  noteResult(request: FastifyRequest, result: SagaResult): void {
    const pending = this.pending.get(request);
    const error = result.error;
    if (pending === undefined || result.outcome !== 'FAIL' || error === undefined) return;
    pending.notRun = error.step === undefined && NOT_RUN.has(error.code);
  }

  /**
   * onSend hook of the one-shot form: store the response of a request that holds a key.
   * Callback style: the requests without a key (nearly all) pass without a promise.
   */
  readonly onSend = (
    request: FastifyRequest,
    reply: FastifyReply,
    payload: unknown,
    done: (err: Error | null, payload?: unknown) => void,
  ): void => {
    const pending = this.pending.get(request);
    if (pending === undefined) return done(null, payload);
    this.pending.delete(request);
    // A failure to store is logged and the response still goes out; the key is left to its
    // lock, so a retry runs again after it.
    this.settle(request, reply, payload, pending).then(
      () => done(null, payload),
      (err: unknown) => {
        request.log.error({ err }, 'idempotency key store failed; the response is not stored');
        done(null, payload);
      },
    );
  };

  /** Store the response for `pending`, or release the key of a run no runner took. */
  private async settle(
    request: FastifyRequest,
    reply: FastifyReply,
    payload: unknown,
    pending: Pending,
  ): Promise<void> {
    if (pending.notRun === true) return this.store.release(pending.id, pending.owner);
    const expiresAt = this.now() + this.options.ttlMs;
    const stored = await this.store.complete(pending.id, pending.owner, this.toStored(reply, payload), expiresAt);
    if (!stored) request.log.warn('idempotency key was taken over before its response was stored');
  }

  close(): Promise<void> {
    return this.store.close();
  }

  private toStored(reply: FastifyReply, payload: unknown): StoredResponse {
    const headers: Record<string, string> = {};
    for (const name of STORED_HEADERS) {
      const value = reply.getHeader(name);
      if (typeof value === 'string') headers[name] = value;
    }
    const text = typeof payload === 'string';
    const body = text ? Buffer.from(payload) : Buffer.isBuffer(payload) ? payload : Buffer.alloc(0);
    // A payload that is neither text nor bytes (a stream) cannot be kept either.
    const omitted = body.length > this.options.maxBody || (!text && !Buffer.isBuffer(payload) && payload != null);
    return { status: reply.statusCode, headers, body: omitted ? Buffer.alloc(0) : body, omitted };
  }
}

/** Send a stored response again. */
function replay(reply: FastifyReply, response: StoredResponse): void {
  reply.code(response.status).headers(response.headers).header('idempotent-replayed', 'true');
  if (response.omitted) {
    // stored without its body (over gateway.idempotency.maxBody): the status alone
    reply.header('idempotent-body-omitted', 'true').removeHeader('content-type');
    reply.send();
    return;
  }
  reply.send(response.body);
}

/** The row id: the caller's scope and the key, hashed (the store never sees either). */
function rowId(admitted: Admitted, ip: string, key: string): string {
  const scope = admitted.principal.anonymous ? `anon@${admitted.api.prefix}` : callerKey(admitted.principal, ip);
  return createHash('sha256').update(scope).update('\n').update(key).digest('base64url');
}

/**
 * The quota scope: the caller (an anonymous one by source address, as the rate limit counts it,
 * not the shared `anon@prefix` of its rows), hashed so that the store never holds the caller in
 * clear. A label keeps it apart from row ids.
 */
function quotaScope(admitted: Admitted, ip: string): string {
  return createHash('sha256').update('quota\n').update(callerKey(admitted.principal, ip)).digest('base64url');
}

/** What makes two requests the same request. */
function fingerprint(request: FastifyRequest): string {
  return createHash('sha256')
    .update(request.method)
    .update('\n')
    .update(request.url)
    .update('\n')
    .update(JSON.stringify(request.body ?? null))
    .digest('base64url');
}
