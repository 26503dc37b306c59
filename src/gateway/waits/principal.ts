import type { FastifyRequest } from 'fastify';
import type { Principal } from '../../core/types.js';
import { ANONYMOUS } from '../auth/authenticator.js';
import { extractCredential } from '../auth/credentials.js';
import type { GatewayContext } from '../context.js';

/**
 * The caller of a wait route: the principal of its credential, ANONYMOUS without one, or
 * undefined when a credential was sent and is not valid (401), as on the status route.
 *
 * The token cookie counts only on a request a browser did not send from another site: a page
 * elsewhere can make a browser POST here with its cookies and no preflight (a form, or a fetch
 * without a body), and a signal, cancel or approval would be decided as that browser's user.
 * Such a request keeps its other credentials (headers it could not have set) and is otherwise
 * anonymous: a callback link's holder then decides as the link.
 */
export async function principalOf(ctx: GatewayContext, request: FastifyRequest): Promise<Principal | undefined> {
  const headers = crossSite(request) ? { ...request.headers, cookie: undefined } : request.headers;
  const credential = extractCredential(headers, ctx.settings.auth.cookie, undefined);
  if (credential === 'invalid') return undefined;
  if (credential === null) return ANONYMOUS;
  return (await ctx.auth.verify(credential)) ?? undefined;
}

/** Whether a browser says it sent the request from another site (Fetch Metadata), or from an opaque origin. */
function crossSite(request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site'];
  return site === 'cross-site' || site === 'same-site' || request.headers.origin === 'null';
}
