import type { IncomingHttpHeaders } from 'node:http';

/**
 * Where a credential comes from (docs/auth.md): `Authorization: Bearer <jwt>`, `X-API-Key`, the
 * token cookie, and `?access_token=` (stream GETs, only when `queryToken` is on). The first one
 * present wins, in that order. An `Authorization` header of another scheme is a bad credential,
 * not an absent one.
 */

/** A presented credential. */
export type Credential = { kind: 'jwt'; token: string } | { kind: 'apikey'; key: string };

/** A credential, null when none is presented, 'invalid' when one is presented badly. */
export type CredentialResult = Credential | null | 'invalid';

/** Longest credential read; longer ones are refused before any parsing. */
export const MAX_CREDENTIAL = 8192;

const BEARER = /^Bearer +(\S+) *$/i;

/** Value of cookie `name` in a Cookie header, or undefined. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined || header === '') return undefined;
  let start = 0;
  while (start < header.length) {
    let end = header.indexOf(';', start);
    if (end < 0) end = header.length;
    const eq = header.indexOf('=', start);
    if (eq > start && eq < end && header.slice(start, eq).trim() === name) {
      let value = header.slice(eq + 1, end).trim();
      if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
      try {
        return decodeURIComponent(value);
      } catch {
        return value;
      }
    }
    start = end + 1;
  }
  return undefined;
}

/** Extract the credential of a request. `queryToken` is the `access_token` query value when allowed. */
export function extractCredential(
  headers: IncomingHttpHeaders,
  cookieName: string,
  queryToken?: unknown,
): CredentialResult {
  const authz = headers.authorization;
  if (authz !== undefined) {
    const m = BEARER.exec(authz);
    if (!m || m[1]!.length > MAX_CREDENTIAL) return 'invalid';
    return { kind: 'jwt', token: m[1]! };
  }
  const apiKey = headers['x-api-key'];
  if (apiKey !== undefined) {
    if (typeof apiKey !== 'string' || apiKey === '' || apiKey.length > MAX_CREDENTIAL) return 'invalid';
    return { kind: 'apikey', key: apiKey };
  }
  const cookie = readCookie(headers.cookie, cookieName);
  if (cookie !== undefined && cookie !== '') {
    return cookie.length > MAX_CREDENTIAL ? 'invalid' : { kind: 'jwt', token: cookie };
  }
  if (queryToken !== undefined) {
    if (typeof queryToken !== 'string' || queryToken === '' || queryToken.length > MAX_CREDENTIAL) return 'invalid';
    return { kind: 'jwt', token: queryToken };
  }
  return null;
}
