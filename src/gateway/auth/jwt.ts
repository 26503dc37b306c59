import { createPublicKey, type KeyObject } from 'node:crypto';
import type { JWTPayload, JWTVerifyGetKey } from 'jose';
import type { JwtSettings } from '../../config/settings.js';

/**
 * JWT verification with jose. The key is chosen from the token's pinned algorithm: HS* tokens are
 * checked with the shared secret, every other algorithm with the public key or the JWKS. Because
 * the algorithm list is pinned and a secret is never used for an asymmetric algorithm (nor a
 * public key for HMAC), the classic HS/RS confusion cannot happen. `exp` is required.
 * Everything (keys, the remote JWKS cache) is built once, not per request.
 */

/** Verifies tokens; rejects with jose's error when a token is not acceptable. */
export interface JwtVerifier {
  verify(token: string): Promise<JWTPayload>;
}

/** How long a JWKS fetch may take, and the least time between two refetches. */
const JWKS_TIMEOUT_MS = 5000;
const JWKS_COOLDOWN_MS = 30_000;

/** Build a verifier from compiled settings. */
export function createJwtVerifier(settings: JwtSettings): JwtVerifier {
  const secret = settings.secret === undefined ? undefined : new TextEncoder().encode(settings.secret);
  const publicKey: KeyObject | undefined =
    settings.publicKey === undefined ? undefined : createPublicKey(settings.publicKey);
  // jose (46 modules) is loaded only by a gateway that verifies JWTs, when it builds its verifier
  // (issue 23: a gateway without JWT auth does not hold it in memory).
  const jose = import('jose');
  jose.catch(() => {}); // a failure is the first verify's error
  const jwksUrl = settings.jwksUrl === undefined ? undefined : new URL(settings.jwksUrl);
  const jwks =
    jwksUrl === undefined
      ? undefined
      : jose.then((lib) =>
          lib.createRemoteJWKSet(jwksUrl, {
            timeoutDuration: JWKS_TIMEOUT_MS,
            cooldownDuration: JWKS_COOLDOWN_MS,
          }),
        );
  jwks?.catch(() => {});

  const getKey: JWTVerifyGetKey = async (header, token) => {
    const alg = header.alg ?? '';
    if (alg.startsWith('HS')) {
      if (secret) return secret;
    } else if (jwks) {
      return (await jwks)(header, token);
    } else if (publicKey) {
      return publicKey;
    }
    throw new Error('no key for this algorithm');
  };

  const options = {
    algorithms: [...settings.algorithms],
    clockTolerance: Math.round(settings.clockToleranceMs / 1000),
    requiredClaims: ['exp'],
    ...(settings.issuer === undefined ? {} : { issuer: settings.issuer }),
    ...(settings.audience === undefined ? {} : { audience: settings.audience }),
  };

  return {
    async verify(token: string): Promise<JWTPayload> {
      const { payload } = await (await jose).jwtVerify(token, getKey, options);
      return payload;
    },
  };
}
