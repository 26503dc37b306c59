import type { IncomingHttpHeaders } from 'node:http';
import type { AuthSettings } from '../../config/settings.js';
import { roleRefusalDetail } from '../../core/roles.js';
import type { AuthDecision } from './authenticator.js';
import type { CredentialResult } from './credentials.js';

/**
 * What a 401 or 403 says (issue 24 item 7): the form of credential this gateway accepts, what
 * was wrong with the one presented, or the roles that would do. Never the credential itself, nor
 * why a token failed verification (expired, signature, audience: the log says it at debug), so
 * a client learns how to ask, not how to forge.
 */

/** The credentials this gateway accepts, in words. */
export function acceptedForms(auth: AuthSettings): string {
  const forms: string[] = [];
  if (auth.jwt) forms.push(`a JWT in \`Authorization: Bearer <token>\` (or the \`${auth.cookie}\` cookie)`);
  if (auth.apiKeys.length > 0) forms.push('an API key in the `X-API-Key` header');
  return forms.length > 0 ? forms.join(', or ') : 'none: gateway.auth sets neither jwt nor apiKeys';
}

/** Why a presented credential could not be read, from the headers that carried it. */
function malformed(headers: IncomingHttpHeaders): string {
  if (headers.authorization !== undefined) return 'the Authorization header must be `Bearer <token>`';
  if (headers['x-api-key'] !== undefined) return 'the X-API-Key header is empty, repeated or too long';
  return 'the credential is empty or too long';
}

/** Why a credential was refused (401), or which roles would do (403). */
export function refusalDetail(
  auth: AuthSettings,
  decision: Extract<AuthDecision, { ok: false }>,
  headers: IncomingHttpHeaders,
  credential: CredentialResult,
): string {
  if (decision.code === 'FORBIDDEN') return roleRefusalDetail('FORBIDDEN', decision.roles ?? []);
  const accepted = `accepted: ${acceptedForms(auth)}`;
  if (credential === null) return `authentication required; ${accepted}`;
  if (credential === 'invalid') return `${malformed(headers)}; ${accepted}`;
  if (credential.kind === 'apikey') return `the API key is not one of this gateway's; ${accepted}`;
  if (!auth.jwt) return `this gateway takes no bearer tokens (gateway.auth.jwt is not set); ${accepted}`;
  return `the bearer token was not accepted (not valid, expired, or not for this gateway); ${accepted}`;
}
