/**
 * The store behind the gateway's `Idempotency-Key` requests (docs/gateway.md, Idempotency keys):
 * one row per (caller, key), addressed by an opaque id the gateway derives from both, holding
 * the request's fingerprint and, once the request has ended, its response. A row is taken
 * atomically (`claim`), so that two requests with one key, on one gateway or on several
 * replicas sharing a SQL store, never both run.
 *
 * A row expires at `expiresAt` (epoch ms): a finished one after the retention (`ttl`). An
 * unfinished one claimed without a binding expires with its lock, so that a key whose request
 * died with its process is free again once the lock has passed. An unfinished one claimed with a
 * binding (`KeyBinding`, issue 26) names the run it started and lives for the retention: when its
 * lock has passed it is not free, it is answered `running` with that run, and the gateway
 * decides from the run's status (replay its outcome, wait for it, or take the key over with
 * `takeOver` when no run is recorded). An expired row counts as absent and is taken over by the
 * next claim; expired rows are also deleted in bounded batches.
 */

/** The response kept for replays. */
export interface StoredResponse {
  status: number;
  /** the headers a replay repeats (content-type, content-security-policy, location) */
  headers: Readonly<Record<string, string>>;
  body: Buffer;
  /** the body was over the size limit and is not kept (`body` is empty) */
  omitted: boolean;
}

/** What `claim` found. */
export type Claim =
  /** the key is this request's now; `owner` proves it to complete and release */
  | { kind: 'claimed'; owner: string }
  /**
   * another request with this key and the same fingerprint has not ended yet; with a binding,
   * the run it started, its claim (`owner`, to complete or take over the row) and its lock's end
   */
  | { kind: 'running'; runId?: string; owner?: string; lockUntil?: number }
  /** the key was used for a different request (another fingerprint), finished or not */
  | { kind: 'mismatch' }
  /** the same request has ended: its response */
  | { kind: 'done'; response: StoredResponse }
  /** the key is new and its caller already holds `quota.max` live keys: nothing was taken */
  | { kind: 'exhausted' };

/**
 * The per-caller bound of a claim: a new key is taken only while fewer than `max` live rows
 * carry `scope` (an opaque hash of the caller, never the caller in clear). A key the caller
 * already holds is answered as usual (a replay, 409, 422) however many it holds.
 */
export interface KeyQuota {
  scope: string;
  max: number;
}

/**
 * What a claim binds its key to (issue 26): the run id of the request, so that a retry can find
 * that run's outcome, and how long the row lives while unfinished (the retention, `ttl`).
 */
export interface KeyBinding {
  runId: string;
  expiresAt: number;
}

/** A store of request keys. */
export interface RequestKeyStore {
  /** `memory`, `sqlite` or `postgres` */
  readonly kind: string;
  /** open the store and create its table when missing */
  init(): Promise<void>;
  /**
   * Take `id` for a request with `fingerprint` unless a live row holds it; the row lives until
   * `lockUntil`, or with a `bind`ing until `bind.expiresAt`, locked until `lockUntil`. With a
   * `quota`, a new key is refused (`exhausted`) when the scope is full.
   */
  claim(
    id: string,
    fingerprint: string,
    now: number,
    lockUntil: number,
    quota?: KeyQuota,
    bind?: KeyBinding,
  ): Promise<Claim>;
  /**
   * Take over the unfinished row `id` that `owner` holds (its run left no trace, its lock has
   * passed), for a new request and run: the new owner, or undefined when the row changed since
   * (finished, released, taken by another).
   */
  takeOver(id: string, owner: string, lockUntil: number, bind: KeyBinding): Promise<string | undefined>;
  /** Store the response of the request that claimed `id`; false when the claim was lost (its lock passed and another request took the key). */
  complete(id: string, owner: string, response: StoredResponse, expiresAt: number): Promise<boolean>;
  /** Forget `id` (the request did not run), if `owner` still holds it. */
  release(id: string, owner: string): Promise<void>;
  close(): Promise<void>;
}
