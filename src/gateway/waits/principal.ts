import type { FastifyRequest } from 'fastify';
import type { Principal } from '../../core/types.js';
import { ANONYMOUS } from '../auth/authenticator.js';
import { extractCredential } from '../auth/credentials.js';
import type { GatewayContext } from '../context.js';

/**
 * The caller of a wait route: the principal of its credential, ANONYMOUS without one, or
 * undefined when a credential was sent and is not valid (401), as on the status route.
 */
export async function principalOf(ctx: GatewayContext, request: FastifyRequest): Promise<Principal | undefined> {
  const credential = extractCredential(request.headers, ctx.settings.auth.cookie, undefined);
  if (credential === 'invalid') return undefined;
  if (credential === null) return ANONYMOUS;
  return (await ctx.auth.verify(credential)) ?? undefined;
}
