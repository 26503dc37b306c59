import { MAX_CALLBACK_TOKEN } from '../../core/waits.js';
import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Callback tokens (`POST /api/callbacks/<token>`, issue 21): a capability for one wait of one
 * run, signed like the stream cursors (gateway/stream/cursor.ts) with a key derived from
 * `gateway.stream.cursorKey`, so every gateway replica and runner of the file verifies what any
 * of them signed. Format `A.M`: A = base64url(JSON `{w, r, s, v, e}`: wait id, run id, step,
 * visit, expiry in epoch ms), M = a 128-bit HMAC-SHA256 tag of A. A holds no secret (ids and a
 * time), only unforgeable; single use is the wait store's (a resolved wait takes no second
 * decision), expiry is the wait's own timeout.
 */

/** What a token names. */
export interface CallbackClaim {
  waitId: string;
  runId: string;
  step: string;
  visit: number;
  /** epoch ms after which the token is refused (410) */
  expiresAt: number;
}

const TAG = 16;

/** Signs and checks callback tokens with one key. */
export class CallbackTokens {
  private readonly key: Buffer;

  /** `secret`: `gateway.stream.cursorKey`; undefined = a random key of this process (tokens die with it). */
  constructor(secret?: string) {
    const base = secret === undefined ? randomBytes(32) : Buffer.from(secret, 'utf8');
    // a key of its own: a cursor tag can never pass for a callback tag
    this.key = Buffer.from(hkdfSync('sha256', base, Buffer.alloc(0), 'sagaway callbacks v1', 32));
  }

  sign(claim: CallbackClaim): string {
    const a = Buffer.from(
      JSON.stringify({ w: claim.waitId, r: claim.runId, s: claim.step, v: claim.visit, e: claim.expiresAt }),
      'utf8',
    ).toString('base64url');
    return `${a}.${this.tag(a).toString('base64url')}`;
  }

  /** The claim of a genuine token (expired or not: the caller tells 410 from 404), else undefined. */
  verify(token: string): CallbackClaim | undefined {
    if (token.length > MAX_CALLBACK_TOKEN) return undefined;
    const dot = token.indexOf('.');
    if (dot <= 0 || dot !== token.lastIndexOf('.')) return undefined;
    const a = token.slice(0, dot);
    const m = token.slice(dot + 1);
    const tag = Buffer.from(m, 'base64url');
    // only the canonical spelling of a tag is its token (base64url leaves spare bits)
    if (tag.length !== TAG || tag.toString('base64url') !== m || !timingSafeEqual(tag, this.tag(a))) return undefined;
    try {
      const body = JSON.parse(Buffer.from(a, 'base64url').toString('utf8')) as Record<string, unknown>;
      const { w, r, s, v, e } = body;
      if (typeof w !== 'string' || typeof r !== 'string' || typeof s !== 'string') return undefined;
      if (typeof v !== 'number' || typeof e !== 'number') return undefined;
      return { waitId: w, runId: r, step: s, visit: v, expiresAt: e };
    } catch {
      return undefined;
    }
  }

  private tag(a: string): Buffer {
    return createHmac('sha256', this.key).update(a).digest().subarray(0, TAG);
  }
}
