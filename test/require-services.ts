/**
 * Skips that cannot hide: a test that needs a service (NATS, PostgreSQL, Redis), the browser or a
 * machine feature skips with a printed reason on a developer's machine, and fails instead under
 * SAGAWAY_REQUIRE_SERVICES=1 (CI sets it), so that a green CI run ran everything it claims to.
 */

/** Whether this run must have every service (SAGAWAY_REQUIRE_SERVICES=1). */
export function servicesRequired(): boolean {
  return process.env['SAGAWAY_REQUIRE_SERVICES'] === '1';
}

/** Skip (printing why) or, under SAGAWAY_REQUIRE_SERVICES=1, fail: the value of a test's `skip` option. */
export function skipOrFail(reason: string): string | false {
  if (servicesRequired()) throw new Error(`required service missing: ${reason}`);
  console.log(`# skipped: ${reason}`);
  return reason;
}

/** `skip` option of a test that needs something: false when `reason` is undefined (it is there). */
export function needs(reason: string | undefined): string | false {
  return reason === undefined ? false : skipOrFail(reason);
}
