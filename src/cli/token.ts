import { SignJWT } from 'jose';
import { SagawayError } from '../core/errors.js';
import { isForbiddenKey } from '../core/path.js';
import { parseDuration } from '../core/units.js';
import { noPositionals, parseRoles, type CliOptions } from './args.js';
import { configPath, loadChecked } from './load.js';

/** Longest lifetime a development token may have: it is signed with the production secret too. */
const MAX_TTL_MS = 30 * 24 * 3600 * 1000;

/**
 * `sagaway token --sub SUB [--roles a,b] [--ttl 1h]`: a development JWT that the configured
 * gateway accepts, signed with `gateway.auth.jwt.secret`. Refused without an HS secret: tokens
 * for public-key setups come from the identity provider that holds the private key.
 */
export async function tokenCommand(options: CliOptions, positionals: string[]): Promise<number> {
  noPositionals('token', positionals);
  const sub = options.sub?.trim();
  if (!sub) throw new SagawayError('VALIDATION_FAILED', 'token needs --sub SUBJECT');
  const file = configPath(options.config, false);
  if (!file) throw new SagawayError('VALIDATION_FAILED', 'no --config given and no ./sagaway.yaml here');
  const ttlMs = parseDuration(options.ttl ?? '1h');
  if (ttlMs === undefined || ttlMs < 1000 || ttlMs > MAX_TTL_MS)
    throw new SagawayError('VALIDATION_FAILED', '--ttl must be a duration from 1s to 720h, e.g. 15m or 1h');
  const { settings } = await loadChecked(file);
  const jwt = settings.gateway.auth.jwt;
  const alg = jwt?.algorithms.find((a) => /^HS(?:256|384|512)$/.test(a));
  if (!jwt || jwt.secret === undefined || alg === undefined) {
    throw new SagawayError(
      'VALIDATION_FAILED',
      'no HS secret is configured (gateway.auth.jwt.secret with an HS256/384/512 algorithm): ' +
        'sagaway token cannot sign a token this gateway would accept',
    );
  }
  const claims = rolesClaim(jwt.rolesClaim, parseRoles(options.roles));
  let signer = new SignJWT(claims)
    .setProtectedHeader({ alg, typ: 'JWT' })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime(Math.floor((Date.now() + ttlMs) / 1000));
  if (jwt.issuer !== undefined) signer = signer.setIssuer(jwt.issuer);
  if (jwt.audience !== undefined) signer = signer.setAudience(jwt.audience);
  const token = await signer.sign(new TextEncoder().encode(jwt.secret));
  process.stdout.write(`${token}\n`);
  return 0;
}

/** The roles at the configured claim path (`roles`, or dotted like `realm_access.roles`). */
function rolesClaim(path: string, roles: string[]): Record<string, unknown> {
  const keys = path.split('.').filter((k) => k !== '');
  if (keys.length === 0 || keys.some(isForbiddenKey)) return {};
  let value: unknown = roles;
  for (const key of keys.reverse()) value = { [key]: value };
  return value as Record<string, unknown>;
}
