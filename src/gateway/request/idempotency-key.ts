import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { callerKey } from '../../core/caller.js';
import type { SagaResult } from '../../core/types.js';
import type { Settings } from '../../config/settings.js';
import type { Logger } from '../../core/logger.js';
import {
  createRequestKeyStore,
  type Claim,
  type KeyBinding,
  type RequestKeyStore,
} from '../../states/request-keys/index.js';
import type { Admitted } from '../forms/admit.js';
import type { Format } from '../apis/saga-path.js';
import { toErrorInfo } from '../../core/errors.js';
import type { AnyRunStatus, StatusSource } from '../../core/messages.js';
import { sendResult } from './respond.js';
import { problemFor, sendProblem } from '../http/helpers/problem.js';
import { parseIdempotencyKey } from './idempotency-header.js';
import { inUse, outcomeOf, replay, toStored } from './idempotency-replay.js';

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
 * - The key is bound to the run it started (its run id, the first request's X-Request-Id), and
 *   locked until the request's timeout plus `LOCK_GRACE_MS`. A request with a key whose first
 *   request has no stored response yet (still running, its gateway died, its answer was lost)
 *   is answered from that run (issue 26 items 2 and 3), read from the gateway's status source
 *   (the journals, the outcome buckets): a finished run's outcome is replayed (and stored for the
 *   next retry); a run in flight is waited for, up to one request timeout, then 409
 *   IDEMPOTENCY_KEY_IN_USE with Retry-After; a run nobody recorded is waited for until the lock
 *   passes, then the key is taken over and the request runs (nothing ran, or its run left no
 *   trace). Without a status source (no journal, no broker) the lock alone decides, as before.
 * - A keyed run is not stopped when its client goes away: its outcome is still stored, so the
 *   client's retry gets it (or waits for it while it runs).
 * - Quota: one caller holds at most `maxKeysPerCaller` live keys (each may keep a stored body for
 *   `ttl`); a new key past it is 429 IDEMPOTENCY_KEYS_EXHAUSTED and the request does not run. The
 *   caller's existing keys are still replayed. Anonymous callers count per source address.
 * - Not stored, the key released (a retry runs again): a failure where nothing ran (`ran: none`:
 *   no runner took the request, or no event of the run reached a handler). Not stored, the key
 *   kept bound (a retry gets the run's outcome from its status): an answer that is not the run's
 *   outcome (`ran: unknown`: the connection to the runner lost, no answer in time, the outcome
 *   not journaled). Every other outcome, failures included, is stored.
 */

/** Methods whose requests a key applies to. */
const KEYED_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** How long past the request's own timeout an unfinished claim holds its key. */
export const LOCK_GRACE_MS = 10_000;
/** First and longest pause between two reads of a run's status while a retry waits for it. */
const WAIT_FIRST_MS = 100;
const WAIT_MAX_MS = 1000;
/** Retry-After of IDEMPOTENCY_KEYS_EXHAUSTED, in seconds: keys free up as they expire, not at once. */
const EXHAUSTED_RETRY_S = 60;
/** gateway.limits.maxResponse when the options do not say (settings made by code). */
const DEFAULT_MAX_RESPONSE = 8 * 1024 * 1024;
/** Settings of idempotency keys (gateway.idempotency). */
export interface IdempotencyOptions {
  ttlMs: number;
  /** largest response body stored; a larger one is stored without it */
  maxBody: number;
  /** timeout of one request (gateway.limits.timeout): the claim's lock is this plus LOCK_GRACE_MS */
  timeoutMs: number;
  /** live keys one caller may hold (gateway.idempotency.maxKeysPerCaller) */
  maxKeysPerCaller: number;
  /** largest response a replay read from a run's status renders (gateway.limits.maxResponse; default 8 MiB) */
  maxResponse?: number;
  /** the clock; default Date.now */
  now?: () => number;
  /** where a key's run is looked up (journals, outcome buckets); absent = the lock alone decides */
  status?: Pick<StatusSource, 'lookup'>;
}

/** A key taken by a request that is running (or answered from its first run). */
interface Pending {
  id: string;
  owner: string;
  /** what becomes of the key when the answer goes out: stored (default), released, or kept bound to the run */
  then?: 'release' | 'keep';
}

/**
 * The idempotency keys of a gateway, with the store `gateway.idempotency.state` names, opened.
 * A database that is down at start is opened again by the first keyed request.
 */
export async function openIdempotencyKeys(
  settings: Settings,
  log: Logger,
  status?: StatusSource,
): Promise<IdempotencyKeys> {
  const { state: alias, ttlMs, maxBody, maxKeysPerCaller } = settings.gateway.idempotency;
  const store = await createRequestKeyStore(alias === undefined ? undefined : settings.states?.[alias], log);
  await store
    .init()
    .catch((err: unknown) => log.warn({ err, state: alias }, 'idempotency key store unavailable at start'));
  return new IdempotencyKeys(store, {
    ttlMs,
    maxBody,
    maxKeysPerCaller,
    timeoutMs: settings.gateway.limits.timeoutMs,
    maxResponse: settings.gateway.limits.maxResponse,
    ...(status ? { status } : {}),
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
  async begin(request: FastifyRequest, reply: FastifyReply, admitted: Admitted, format: Format): Promise<boolean> {
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
      claim = await this.store.claim(
        id,
        fingerprint(request),
        now,
        this.lockUntil(now),
        quota,
        this.binding(request, now),
      );
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
        if (claim.runId === undefined || claim.owner === undefined || this.options.status === undefined) {
          inUse(request, reply);
          return false;
        }
        return this.answerFromRun(request, reply, admitted, format, id, {
          runId: claim.runId,
          owner: claim.owner,
          lockUntil: claim.lockUntil ?? 0,
        });
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

  /**
   * Note the run's result: a failure where nothing ran releases the key; an answer that is not
   * the run's outcome (`ran: unknown`) leaves the key bound to the run, unstored, for a retry to
   * be answered from the run's status.
   */
  noteResult(request: FastifyRequest, result: SagaResult): void {
    const pending = this.pending.get(request);
    if (pending === undefined || result.ran === undefined) return;
    pending.then = result.ran === 'none' ? 'release' : 'keep';
  }

  /**
   * A request whose key is bound to an unfinished first request (issue 26 items 2 and 3): answer
   * it from that run, whose status (journal, outcome bucket) says where it is. Returns whether
   * the request should run (it took the key over); otherwise it has been answered.
   */
  private async answerFromRun(
    request: FastifyRequest,
    reply: FastifyReply,
    admitted: Admitted,
    format: Format,
    id: string,
    first: { runId: string; owner: string; lockUntil: number },
  ): Promise<boolean> {
    const status = this.options.status!;
    const scope = callerKey(admitted.principal, request.ip);
    const giveUpAt = this.now() + this.options.timeoutMs;
    for (let pause = WAIT_FIRST_MS; ; pause = Math.min(WAIT_MAX_MS, pause * 2)) {
      let run: AnyRunStatus | undefined;
      try {
        run = await status.lookup(scope, first.runId);
      } catch (err) {
        // the run may be in a store that is down: never run it again on a guess
        request.log.warn({ code: toErrorInfo(err).code }, 'idempotency key: the status of its run cannot be read');
        sendProblem(
          reply,
          problemFor(
            'STATE_UNAVAILABLE',
            request.id,
            'the outcome of the request with this Idempotency-Key cannot be read now',
          ),
        );
        return false;
      }
      const outcome = run && outcomeOf(run);
      if (run && outcome) {
        // replayed, and stored for the next retry (if the first request's claim still holds the row)
        this.pending.set(request, { id, owner: first.owner });
        reply.header('idempotent-replayed', 'true');
        if (
          'responseOmitted' in run &&
          run.responseOmitted !== undefined &&
          outcome.outcome !== 'FAIL' &&
          outcome.outcome !== 'TIMEOUT'
        ) {
          // kept without its body (over runners.R.statusMaxSize): the status alone, as a stored one
          reply.code(outcome.http).header('idempotent-body-omitted', 'true').send();
          return false;
        }
        sendResult(reply, request.id, admitted, format, outcome, this.options.maxResponse ?? DEFAULT_MAX_RESPONSE);
        return false;
      }
      const now = this.now();
      if (run === undefined && now >= first.lockUntil) {
        // No run was ever recorded and the lock has passed: nothing ran (or left a trace).
        let owner: string | undefined;
        try {
          owner = await this.store.takeOver(id, first.owner, this.lockUntil(now), this.binding(request, now)!);
        } catch (err) {
          request.log.error({ err }, 'idempotency key store failed');
          sendProblem(reply, problemFor('STATE_UNAVAILABLE', request.id, 'the idempotency key store is not available'));
          return false;
        }
        if (owner !== undefined) {
          this.pending.set(request, { id, owner });
          return true;
        }
        inUse(request, reply);
        return false;
      }
      // (the request's own stream is destroyed once read: its socket tells whether the client left)
      if (now + pause > giveUpAt || reply.raw.destroyed || request.raw.socket?.destroyed === true) {
        inUse(request, reply);
        return false;
      }
      await new Promise((r) => setTimeout(r, pause));
    }
  }

  /** The end of a new claim's lock. */
  private lockUntil(now: number): number {
    return now + this.options.timeoutMs + LOCK_GRACE_MS;
  }

  /**
   * What a new claim binds its key to: the request's run (its id), for the retention. Not bound
   * without a status source: nothing could tell the run's outcome, so the lock alone decides.
   */
  private binding(request: FastifyRequest, now: number): KeyBinding | undefined {
    if (this.options.status === undefined) return undefined;
    return { runId: request.id, expiresAt: now + this.options.ttlMs };
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
    if (pending.then === 'release') return this.store.release(pending.id, pending.owner);
    // not the run's outcome: the key stays bound to the run (its lock and retention run on)
    if (pending.then === 'keep') return;
    const expiresAt = this.now() + this.options.ttlMs;
    const stored = await this.store.complete(
      pending.id,
      pending.owner,
      toStored(reply, payload, this.options.maxBody),
      expiresAt,
    );
    if (!stored) request.log.warn('idempotency key was taken over before its response was stored');
  }

  close(): Promise<void> {
    return this.store.close();
  }
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
