import type { Principal } from './types.js';

/**
 * The one role rule, shared by the gateway's API check, the runner's saga check and
 * saga.StartSaga: no roles required lets everyone through; otherwise an anonymous caller is
 * UNAUTHORIZED and an authenticated one without any of the roles FORBIDDEN.
 */
export function roleRefusal(
  roles: readonly string[],
  user: Principal | null | undefined,
): 'UNAUTHORIZED' | 'FORBIDDEN' | undefined {
  if (roles.length === 0) return undefined;
  if (!user || user.anonymous) return 'UNAUTHORIZED';
  return roles.some((r) => user.roles.includes(r)) ? undefined : 'FORBIDDEN';
}

/**
 * The detail of a role refusal (issue 24 item 7): the roles that would do, never the caller's
 * own roles or credential. Role names are configuration, not secrets.
 */
export function roleRefusalDetail(code: 'UNAUTHORIZED' | 'FORBIDDEN', roles: readonly string[]): string {
  const needed = roles.length === 1 ? `the role ${roles[0]}` : `one of the roles ${roles.join(', ')}`;
  return code === 'FORBIDDEN'
    ? `a required role is missing: this needs ${needed}`
    : `authentication required: this needs a caller with ${needed}`;
}
