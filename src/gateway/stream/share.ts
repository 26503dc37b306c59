import { createHash } from 'node:crypto';
import { keepBounded } from '../../core/bounded-map.js';
import type { ShareScope } from '../../config/settings.js';
import { cursorBinding } from '../../core/caller.js';
import type { Principal } from '../../core/types.js';

/**
 * Which streams may share one saga run per poll (issue 11, docs/streams.md#shared-polls).
 *
 * Two streams share a poll when their next poll would be the same saga run: same runner,
 * method, saga path, INPUT (canonical JSON, so key order does not matter), query (for body
 * methods, where `@.request.query` is not part of INPUT), `previous`, and share scope:
 * - `caller`: the same cursor binding (`jwt:<principal>`, `key:<name>`, or `anon`), the same
 *   roles and the same claims but for the ones that change with every token (`exp`, `iat`,
 *   `nbf`, `jti`, `auth_time`), so the run that the group makes with one member's principal is
 *   the run any member's own loop would have made (the saga may read `@.user.claims.tenant`);
 * - `all`: every caller of the API; the run has no user, and cursor tokens are bound to the API
 *   (`api:<prefix>`), not to a caller;
 * - `off`: no key, no sharing (each stream polls alone, as before issue 11).
 */

/** Where the group key of a stream comes from. */
export interface ShareInput {
  share: ShareScope;
  /** the API's normalised prefix */
  api: string;
  principal: Principal;
  runner: string;
  method: string;
  path: string;
  input: Record<string, unknown>;
  query: Record<string, unknown>;
  /** whether INPUT is the body (then the query is part of the key too) */
  body: boolean;
}

/** The cursor binding of a stream: the API for `all`, the caller otherwise (tokens resume in their scope only). */
export function shareBinding(share: ShareScope, api: string, principal: Principal): string {
  return share === 'all' ? `api:${api}` : cursorBinding(principal);
}

const MAX_DEPTH = 64;

/** Claims that differ between two tokens of one session without changing who the caller is. */
const VOLATILE_CLAIMS = new Set(['exp', 'iat', 'nbf', 'jti', 'auth_time']);

/** The caller's claims without the volatile ones, as canonical JSON. */
function stableClaims(claims: Record<string, unknown>): string {
  const kept: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(claims)) if (!VOLATILE_CLAIMS.has(k)) kept[k] = v;
  return canonicalJson(kept);
}

/**
 * JSON with object keys sorted, so that `{a,b}` and `{b,a}` are one key. Input comes from a
 * parsed query or a body the gateway already bounded (`bodyLimit`), so its size is bounded; its
 * depth is bounded here (deeper values are written as they come, which only costs sharing).
 */
export function canonicalJson(value: unknown, depth = 0): string {
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return '[' + value.map((v) => canonicalJson(v, depth + 1)).join(',') + ']';
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).sort();
  let out = '{';
  for (const k of keys) {
    if (obj[k] === undefined) continue;
    if (out.length > 1) out += ',';
    out += JSON.stringify(k) + ':' + canonicalJson(obj[k], depth + 1);
  }
  return out + '}';
}

/**
 * The part of a stream's group key that never changes (everything but `previous`), as a
 * SHA-256 digest, or undefined when the stream shares with nobody (`off`).
 */
export function shareBase(s: ShareInput): string | undefined {
  if (s.share === 'off') return undefined;
  const who =
    s.share === 'all'
      ? `all\n${s.api}`
      : `caller\n${cursorBinding(s.principal)}\n${canonicalJson([...s.principal.roles].sort())}\n${stableClaims(s.principal.claims)}`;
  const text = [who, s.runner, s.method, s.path, canonicalJson(s.input), s.body ? canonicalJson(s.query) : ''].join(
    '\n',
  );
  // A digest, not the text: a body may be up to `bodyLimit`, and the key is kept per group and
  // hashed by every lookup. The digests of short texts are remembered: every request of a feed's
  // long-poll form asks for the same one (a SHA-256 call was ~4 µs of each).
  const known = text.length <= DIGESTED_LENGTH ? digested.get(text) : undefined;
  if (known !== undefined) return known;
  const digest = createHash('sha256').update(text).digest('base64url');
  if (text.length <= DIGESTED_LENGTH) keepBounded(digested, text, digest, DIGESTED);
  return digest;
}

/** Digests of shareBase texts remembered: at most DIGESTED of at most DIGESTED_LENGTH characters (~2 MB), oldest first out. */
const DIGESTED = 1024;
const DIGESTED_LENGTH = 2048;
const digested = new Map<string, string>();

/** The group key of a stream whose next poll has `previous` (undefined = the first poll). */
export function pollKey(base: string, previous: unknown): string {
  return previous === undefined ? base + '\n-' : base + '\n=' + canonicalJson(previous);
}
