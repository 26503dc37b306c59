import { randomUUID } from 'node:crypto';
import type { Claim, KeyBinding, KeyQuota, RequestKeyStore, StoredResponse } from './store.js';

/**
 * The in-process request key store (the default). Bounded: at most `maxKeys` rows and
 * `maxBytes` of stored bodies; past either, the stored responses that expire first are dropped
 * first, even when still live, and running claims only when no stored response is left (a replay of a dropped key then runs the request again: use a SQL state when
 * that matters, see docs/gateway.md). Rows are kept in the order they were claimed or
 * completed, which is nearly their expiry order, so expired ones are removed from the front in
 * constant time per row. The stored bodies of one caller (a quota scope) take at most an eighth
 * of `maxBytes`: past it, that caller's own oldest stored responses are dropped first.
 */

interface Row {
  fingerprint: string;
  owner: string;
  expiresAt: number;
  response?: StoredResponse;
  /** the caller's quota scope (a hash), when the claim had a quota */
  scope?: string;
  /** the run the claim started, and the end of its lock (a claim with a binding) */
  runId?: string;
  lockUntil?: number;
}

/** One quota scope's stored bodies take at most 1/SCOPE_SHARE of the store's bytes. */
const SCOPE_SHARE = 8;

/** Bounds of the memory store. */
export interface MemoryKeyLimits {
  /** rows at most; default 100,000 */
  maxKeys?: number;
  /** bytes of stored bodies at most; default 64 MiB */
  maxBytes?: number;
}

/** Request keys in a Map, for one gateway process. */
export class MemoryKeyStore implements RequestKeyStore {
  readonly kind = 'memory';
  /** in the order of claim or completion (a row is re-inserted when it completes): rows of one kind live equally long */
  private readonly rows = new Map<string, Row>();
  private bytes = 0;
  /** ids of the rows held per quota scope, in the order they were claimed */
  private readonly perScope = new Map<string, Set<string>>();
  /** bytes of stored bodies per quota scope */
  private readonly scopeBytes = new Map<string, number>();
  private readonly maxKeys: number;
  private readonly maxBytes: number;

  constructor(limits: MemoryKeyLimits = {}) {
    this.maxKeys = limits.maxKeys ?? 100_000;
    this.maxBytes = limits.maxBytes ?? 64 * 1024 * 1024;
  }

  async init(): Promise<void> {}

  async claim(
    id: string,
    fingerprint: string,
    now: number,
    lockUntil: number,
    quota?: KeyQuota,
    bind?: KeyBinding,
  ): Promise<Claim> {
    this.expire(now);
    const row = this.rows.get(id);
    if (row !== undefined && row.expiresAt > now) {
      if (row.fingerprint !== fingerprint) return { kind: 'mismatch' };
      if (row.response) return { kind: 'done', response: row.response };
      if (row.runId === undefined) return { kind: 'running' };
      return { kind: 'running', runId: row.runId, owner: row.owner, lockUntil: row.lockUntil ?? 0 };
    }
    if (row !== undefined) this.remove(id, row);
    if (quota !== undefined && this.full(quota, now)) return { kind: 'exhausted' };
    const owner = randomUUID();
    this.rows.set(id, {
      fingerprint,
      owner,
      expiresAt: bind ? Math.max(bind.expiresAt, lockUntil) : lockUntil,
      ...(quota ? { scope: quota.scope } : {}),
      ...(bind ? { runId: bind.runId, lockUntil } : {}),
    });
    if (quota !== undefined) {
      const ids = this.perScope.get(quota.scope) ?? new Set<string>();
      this.perScope.set(quota.scope, ids.add(id));
    }
    this.bound();
    return { kind: 'claimed', owner };
  }

  async complete(id: string, owner: string, response: StoredResponse, expiresAt: number): Promise<boolean> {
    const row = this.rows.get(id);
    if (row === undefined || row.owner !== owner) return false;
    this.rows.delete(id);
    this.rows.set(id, { ...row, expiresAt, response });
    // a row stored again (two retries answered from one run at once) gives its old body's bytes back
    const added = response.body.length - (row.response?.body.length ?? 0);
    this.bytes += added;
    if (row.scope !== undefined) this.shareBytes(id, row.scope, added);
    this.bound();
    return true;
  }

  async takeOver(id: string, owner: string, lockUntil: number, bind: KeyBinding): Promise<string | undefined> {
    const row = this.rows.get(id);
    if (row === undefined || row.owner !== owner || row.response !== undefined) return undefined;
    const next = randomUUID();
    this.rows.delete(id);
    this.rows.set(id, {
      ...row,
      owner: next,
      runId: bind.runId,
      lockUntil,
      expiresAt: Math.max(bind.expiresAt, lockUntil),
    });
    return next;
  }

  async release(id: string, owner: string): Promise<void> {
    const row = this.rows.get(id);
    if (row !== undefined && row.owner === owner) this.remove(id, row);
  }

  async close(): Promise<void> {
    this.rows.clear();
    this.perScope.clear();
    this.scopeBytes.clear();
    this.bytes = 0;
  }

  /** Rows held now (tests). */
  get size(): number {
    return this.rows.size;
  }

  private remove(id: string, row: Row): void {
    this.rows.delete(id);
    this.bytes -= row.response?.body.length ?? 0;
    if (row.scope === undefined) return;
    const bytes = (this.scopeBytes.get(row.scope) ?? 0) - (row.response?.body.length ?? 0);
    if (bytes > 0) this.scopeBytes.set(row.scope, bytes);
    else this.scopeBytes.delete(row.scope);
    const ids = this.perScope.get(row.scope);
    if (ids === undefined) return;
    ids.delete(id);
    if (ids.size === 0) this.perScope.delete(row.scope as string);
  }

  /**
   * Count `added` bytes to `scope`, and keep the scope within its share of the store's bytes
   * (an eighth): past it, the scope's own oldest stored responses go, not other callers'. One
   * caller's keys (up to maxKeysPerCaller bodies of maxBody each) could otherwise fill the whole
   * store and push every other caller's stored responses out.
   */
  private shareBytes(id: string, scope: string, added: number): void {
    this.scopeBytes.set(scope, (this.scopeBytes.get(scope) ?? 0) + added);
    const share = this.maxBytes / SCOPE_SHARE;
    const ids = this.perScope.get(scope);
    if (ids === undefined) return;
    for (const other of ids) {
      if ((this.scopeBytes.get(scope) ?? 0) <= share) return;
      const row = this.rows.get(other);
      if (other !== id && row?.response !== undefined) this.remove(other, row);
    }
  }

  /**
   * Whether the scope holds `quota.max` live rows. Expired rows can wait behind a live one in
   * `rows` (see expire), so a scope that looks full drops its own expired rows first: at most
   * `max` rows looked at, and only for a caller at its bound.
   */
  private full(quota: KeyQuota, now: number): boolean {
    const ids = this.perScope.get(quota.scope);
    if (ids === undefined || ids.size < quota.max) return false;
    for (const id of ids) {
      const row = this.rows.get(id);
      if (row !== undefined && row.expiresAt <= now) this.remove(id, row);
    }
    return ids.size >= quota.max;
  }

  /**
   * Drop expired rows from the front. Unfinished rows (short locks) and finished ones (long
   * retention) interleave, so the scan stops at the first live row: an expired row behind it
   * waits for its turn, and is treated as absent by claim meanwhile.
   */
  private expire(now: number): void {
    for (const [id, row] of this.rows) {
      if (row.expiresAt > now) return;
      this.remove(id, row);
    }
  }

  /**
   * Back within the bounds: stored responses go first, and a claim whose request is still
   * running only when no stored response is left to drop. Dropping a running claim lets the
   * same request run twice at once (a client's retry while the first still charges a card),
   * and one client with many keys must not be able to do that to another's request. Running
   * claims are bounded by the requests in flight (each lasts at most the timeout plus grace).
   */
  private bound(): void {
    const over = () => this.rows.size > this.maxKeys || this.bytes > this.maxBytes;
    if (!over()) return;
    for (const [id, row] of this.rows) {
      if (!over()) return;
      if (row.response !== undefined) this.remove(id, row);
    }
    for (const [id, row] of this.rows) {
      if (!over()) return;
      this.remove(id, row);
    }
  }
}
