import { createRequire } from 'node:module';
import { SagawayError } from '../../../core/errors.js';

/**
 * @fastify/rate-limit's stores, used without the plugin (rate-limit.ts says why). The package
 * exports the plugin and `normalizeIP`, not its stores: they are loaded from its `store/` folder,
 * which is not a public API, so their shape is checked when the gateway starts. A version whose
 * stores look different stops the gateway with an error that says so, rather than counting
 * wrongly or not at all (written against 11.2.0, pinned in package.json).
 */

/** What the stores answer. */
export interface Count {
  current: number;
  ttl: number;
}

/** The part of LocalStore and RedisStore that is used. */
export interface Store {
  incr(key: string, cb: (err: Error | null, res: Count | null) => void, windowMs: number, max: number): void;
}

/** `new LocalStore(continueExceeding, exponentialBackoff, cache)`, `new RedisStore(continueExceeding, exponentialBackoff, redis, nameSpace)`. */
export type StoreClass = new (continueExceeding: boolean, exponentialBackoff: boolean, ...rest: unknown[]) => Store;

export type StoreName = 'LocalStore' | 'RedisStore';

/** The version the checks below were written against. */
export const STORE_VERSION_CHECKED = '11.2.0';

const requirePlugin = createRequire(import.meta.url);

/** A store constructor of the installed @fastify/rate-limit, checked. */
export function loadStore(name: StoreName): StoreClass {
  const version = (requirePlugin('@fastify/rate-limit/package.json') as { version?: unknown }).version;
  let loaded: unknown;
  try {
    loaded = requirePlugin(`@fastify/rate-limit/store/${name}.js`);
  } catch (err) {
    throw changed(name, String(version), 'it cannot be loaded', err);
  }
  return checkStore(loaded, name, String(version));
}

/**
 * `loaded` as a store constructor, or an error naming what differs: a constructor whose
 * prototype has `incr(key, callback, windowMs, max)`; LocalStore is also run once on a probe key
 * (it is in memory): the first count of a window is 1 with the whole window (in ms) left, the
 * second is 2.
 */
export function checkStore(loaded: unknown, name: StoreName, version: string): StoreClass {
  if (typeof loaded !== 'function') throw changed(name, version, 'it is not a constructor');
  const incr = (loaded.prototype as { incr?: unknown } | undefined)?.incr;
  if (typeof incr !== 'function' || incr.length !== 4)
    throw changed(name, version, 'it has no incr(key, callback, timeWindow, max)');
  const Store = loaded as StoreClass;
  if (name === 'LocalStore') {
    const probe = new Store(false, false, 1);
    const counts: (Count | null)[] = [];
    // (the store answers with its own record, changed by the next count: copied)
    const note = (err: Error | null, res: Count | null): void =>
      void counts.push(err || !res ? null : { current: res.current, ttl: res.ttl });
    probe.incr('probe', note, 60_000, 10);
    probe.incr('probe', note, 60_000, 10);
    const [first, second] = counts;
    const ok =
      counts.length === 2 &&
      first?.current === 1 &&
      second?.current === 2 &&
      typeof first.ttl === 'number' &&
      first.ttl > 1000 &&
      first.ttl <= 60_000;
    if (!ok) throw changed(name, version, 'a probe count did not answer { current, ttl } in ms at once');
  }
  return Store;
}

function changed(name: StoreName, version: string, what: string, cause?: unknown): SagawayError {
  return new SagawayError(
    'INTERNAL',
    `rate limit: @fastify/rate-limit ${version} store/${name}.js is not the store sagaway was written against ` +
      `(${STORE_VERSION_CHECKED}): ${what}. Install @fastify/rate-limit ${STORE_VERSION_CHECKED}.`,
    cause === undefined ? {} : { cause },
  );
}
