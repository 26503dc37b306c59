import type { FastifyBaseLogger } from 'fastify';
import type { AuthSettings } from '../config/settings.js';
import type { Principal } from '../core/types.js';
import { isForbiddenKey } from '../core/path.js';
import type { CompiledApi } from './api-map.js';
import { ApiKeyStore } from './auth-api-key.js';
import type { Credential } from './auth-credentials.js';
import { createJwtVerifier, type JwtVerifier } from './auth-jwt.js';

/**
 * Authentication and the gateway's authorisation (DESIGN §3 gateway.auth). A non-public API needs
 * a valid credential (401 UNAUTHORIZED otherwise, never saying why) and, when it lists `roles`,
 * at least one of them (403 FORBIDDEN). A credential that is presented must be valid even on a
 * public API: a client with a broken token learns it at once instead of silently becoming
 * anonymous. Saga `roles` are checked by the runner.
 */

/** The caller of a public API that presented no credential. */
export const ANONYMOUS: Principal = Object.freeze({
  sub: 'anonymous',
  roles: Object.freeze([]) as unknown as string[],
  claims: Object.freeze({}) as Record<string, unknown>,
  anonymous: true,
});

/** Outcome of the gateway's checks for one API. */
export type AuthDecision = { ok: true; principal: Principal } | { ok: false; code: 'UNAUTHORIZED' | 'FORBIDDEN' };

const UNAUTHORIZED: AuthDecision = Object.freeze({ ok: false, code: 'UNAUTHORIZED' });

/** Roles at a dotted claim path: an array of strings, or a space-separated string (like `scope`). */
export function rolesAt(claims: Record<string, unknown>, path: readonly string[]): string[] {
  let node: unknown = claims;
  for (const key of path) {
    if (typeof node !== 'object' || node === null || Array.isArray(node) || !Object.hasOwn(node, key)) return [];
    node = (node as Record<string, unknown>)[key];
  }
  if (Array.isArray(node)) return node.filter((r): r is string => typeof r === 'string');
  if (typeof node === 'string') return node.split(/\s+/).filter((r) => r !== '');
  return [];
}

/** Verifies credentials and applies per-API rules. Build once per gateway. */
export class Authenticator {
  private readonly jwt?: JwtVerifier;
  private readonly keys: ApiKeyStore;
  private readonly rolesPath: readonly string[];

  constructor(
    readonly settings: AuthSettings,
    private readonly log: FastifyBaseLogger,
  ) {
    if (settings.jwt) this.jwt = createJwtVerifier(settings.jwt);
    this.keys = new ApiKeyStore(settings.apiKeys);
    const path = (settings.jwt?.rolesClaim ?? 'roles').split('.').filter((s) => s !== '');
    this.rolesPath = path.some(isForbiddenKey) ? [] : path;
  }

  /** The principal of a credential, or null when it is not valid. */
  async verify(credential: Credential): Promise<Principal | null> {
    return credential.kind === 'apikey' ? this.verifyKey(credential.key) : this.verifyJwt(credential.token);
  }

  private verifyKey(presented: string): Principal | null {
    const key = this.keys.find(presented);
    return key ? { sub: `apikey:${key.name}`, roles: [...key.roles], claims: {}, anonymous: false } : null;
  }

  private async verifyJwt(token: string): Promise<Principal | null> {
    if (!this.jwt) return null;
    try {
      const claims = (await this.jwt.verify(token)) as Record<string, unknown>;
      const sub = typeof claims['sub'] === 'string' && claims['sub'] !== '' ? claims['sub'] : 'jwt';
      return { sub, roles: rolesAt(claims, this.rolesPath), claims, anonymous: false };
    } catch (err) {
      // The reason goes to the log (never the token); the client only learns 401.
      this.log.debug({ reason: (err as { code?: string }).code ?? 'invalid' }, 'jwt rejected');
      return null;
    }
  }

  /**
   * Apply the API's rules to a credential extraction result. Synchronous unless a JWT has to be
   * verified, so that the common cases (public APIs, API keys) cost no promise.
   */
  decide(api: CompiledApi, credential: Credential | null | 'invalid'): AuthDecision | Promise<AuthDecision> {
    if (credential === 'invalid') return UNAUTHORIZED;
    if (credential === null) return api.settings.public ? { ok: true, principal: ANONYMOUS } : UNAUTHORIZED;
    if (credential.kind === 'apikey') {
      const principal = this.verifyKey(credential.key);
      return principal ? this.authorize(api, principal) : UNAUTHORIZED;
    }
    return this.verifyJwt(credential.token).then((principal) =>
      principal ? this.authorize(api, principal) : UNAUTHORIZED,
    );
  }

  /** The role check alone (the principal is already authenticated). */
  authorize(api: CompiledApi, principal: Principal): AuthDecision {
    const required = api.settings.roles;
    if (!api.settings.public && required.length > 0 && !required.some((r) => principal.roles.includes(r))) {
      return { ok: false, code: 'FORBIDDEN' };
    }
    return { ok: true, principal };
  }
}
