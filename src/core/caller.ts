import type { Principal } from './types.js';

/**
 * The keys that tell callers apart (issue 9 item 7). Every kind of caller has its own namespace,
 * so that no value a caller controls (a JWT's subject, an API key's name, an address) can make
 * two kinds of callers meet: a token whose subject is "anonymous", "apikey:ci" or "127.0.0.1"
 * is still a token holder and nothing else.
 *
 * - `jwt:<subject>`: a JWT holder (the `principalClaim` of the token; also a principal made by
 *   code, e.g. tests and `sagaway run`, that says neither `kind` nor `anonymous`);
 * - `key:<name>`: an API key;
 * - `anon:<address>`: an anonymous caller of a public API, by source address (DESIGN §7: "a
 *   client is the authenticated principal, or the source address when anonymous").
 */

/** Prefix of the `sub` of API-key principals (docs/auth.md). */
export const APIKEY_SUB_PREFIX = 'apikey:';

/**
 * The caller's scope: what status records, per-client stream limits (and any other per-caller
 * state) are keyed by. `address` is the source address (only used when anonymous).
 */
export function callerKey(user: Principal | null | undefined, address: string): string {
  if (!user || user.anonymous) return `anon:${address}`;
  if (user.kind === 'apikey') {
    const name = user.sub.startsWith(APIKEY_SUB_PREFIX) ? user.sub.slice(APIKEY_SUB_PREFIX.length) : user.sub;
    return `key:${name}`;
  }
  return `jwt:${user.sub}`;
}

/**
 * The cursor binding of a caller (DESIGN §7). Like `callerKey`, except that anonymous callers
 * share one binding whatever their address: an anonymous feed is public, and a browser that
 * reconnects from a new address (a phone changing networks) must still resume its stream.
 * `anon` can never equal an authenticated binding (those always have a `jwt:`/`key:` prefix).
 */
export function cursorBinding(user: Principal | null | undefined): string {
  return !user || user.anonymous ? 'anon' : callerKey(user, '');
}
