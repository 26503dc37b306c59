import type { FastifyBaseLogger } from 'fastify';
import type { AuthSettings } from '../../config/settings.js';
import type { Principal } from '../../core/types.js';
import { APIKEY_SUB_PREFIX } from '../../core/caller.js';
import { isForbiddenKey } from '../../core/path.js';
import { roleRefusal } from '../../core/roles.js';
import type { CompiledApi } from '../apis/api-map.js';
import { ApiKeyStore } from './api-key.js';
import type { Credential } from './credentials.js';
import { createJwtVerifier, type JwtVerifier } from './jwt.js';

/**
 * Authentication and the gateway's authorisation (DESIGN §3 gateway.auth). A non-public API needs
 * a valid credential (401 UNAUTHORIZED otherwise, saying which forms are accepted: refusal-detail.ts) and, when it lists `roles`,
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
export type AuthDecision =
  | { ok: true; principal: Principal }
  /** `roles`: the roles that would do, for a FORBIDDEN's detail (auth/refusal-detail.ts) */
  | { ok: false; code: 'UNAUTHORIZED' | 'FORBIDDEN'; roles?: readonly string[] };

const UNAUTHORIZED: AuthDecision = Object.freeze({ ok: false, code: 'UNAUTHORIZED' });

/** Longest principal (`principalClaim` value) accepted. */
const MAX_PRINCIPAL_LENGTH = 1024;

/** The value at a dotted claim path (own keys only), or undefined. */
function valueAt(claims: Record<string, unknown>, path: readonly string[]): unknown {
  let node: unknown = claims;
  for (const key of path) {
    if (typeof node !== 'object' || node === null || Array.isArray(node) || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** A dotted claim path, or none when it names a forbidden key (then nothing is found there). */
function claimPath(dotted: string): readonly string[] | undefined {
  const path = dotted.split('.').filter((s) => s !== '');
  return path.length === 0 || path.some(isForbiddenKey) ? undefined : path;
}

/** Roles at a dotted claim path: an array of strings, or a space-separated string (like `scope`). */
export function rolesAt(claims: Record<string, unknown>, path: readonly string[]): string[] {
  const node = path.length === 0 ? undefined : valueAt(claims, path);
  if (Array.isArray(node)) return node.filter((r): r is string => typeof r === 'string');
  if (typeof node === 'string') return node.split(/\s+/).filter((r) => r !== '');
  return [];
}

/** Verifies credentials and applies per-API rules. Build once per gateway. */
export class Authenticator {
  private readonly jwt?: JwtVerifier;
  private readonly keys: ApiKeyStore;
  private readonly rolesPath: readonly string[];
  /** where the principal is in a token (`principalClaim`, default `sub`) */
  private readonly principalPath: readonly string[] | undefined;

  constructor(
    readonly settings: AuthSettings,
    private readonly log: FastifyBaseLogger,
  ) {
    if (settings.jwt) this.jwt = createJwtVerifier(settings.jwt);
    this.keys = new ApiKeyStore(settings.apiKeys);
    this.rolesPath = claimPath(settings.jwt?.rolesClaim ?? 'roles') ?? [];
    // An unusable path (`__proto__`, empty) finds nothing: every token is refused, never one shared principal.
    this.principalPath = claimPath(settings.jwt?.principalClaim ?? 'sub');
  }

  /** The principal of a credential, or null when it is not valid. */
  async verify(credential: Credential): Promise<Principal | null> {
    return credential.kind === 'apikey' ? this.verifyKey(credential.key) : this.verifyJwt(credential.token);
  }

  private verifyKey(presented: string): Principal | null {
    const key = this.keys.find(presented);
    return key
      ? { sub: `${APIKEY_SUB_PREFIX}${key.name}`, roles: [...key.roles], claims: {}, anonymous: false, kind: 'apikey' }
      : null;
  }

  private async verifyJwt(token: string): Promise<Principal | null> {
    if (!this.jwt) return null;
    let claims: Record<string, unknown>;
    try {
      claims = (await this.jwt.verify(token)) as Record<string, unknown>;
    } catch (err) {
      // The reason goes to the log (never the token); the client only learns 401.
      this.log.debug({ reason: (err as { code?: string }).code ?? 'invalid' }, 'jwt rejected');
      return null;
    }
    // A token that names nobody is refused: it would otherwise be one shared principal for
    // every such token (its status records, cursors and stream slots shared with all of them).
    const sub = this.principalPath && valueAt(claims, this.principalPath);
    if (typeof sub !== 'string' || sub === '' || sub.length > MAX_PRINCIPAL_LENGTH) {
      this.log.debug({ reason: 'ERR_NO_PRINCIPAL_CLAIM' }, 'jwt rejected');
      return null;
    }
    return { sub, roles: rolesAt(claims, this.rolesPath), claims, anonymous: false, kind: 'jwt' };
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
    const refused = api.settings.public ? undefined : roleRefusal(api.settings.roles, principal);
    return refused ? { ok: false, code: refused, roles: api.settings.roles } : { ok: true, principal };
  }
}
