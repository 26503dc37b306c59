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
