import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SagawayError } from '../../../core/errors.js';
import { checkStore, loadStore, STORE_VERSION_CHECKED, type Count } from './rate-store.js';

// The stores are loaded from @fastify/rate-limit's store/ folder, not its public API: a version
// whose stores look different must stop the gateway at start, saying why.

test('the installed @fastify/rate-limit stores pass the check, and the local one counts', () => {
  const LocalStore = loadStore('LocalStore');
  const RedisStore = loadStore('RedisStore');
  assert.equal(typeof RedisStore, 'function');
  const store = new LocalStore(false, false, 10);
  const counts: Count[] = [];
  for (let i = 0; i < 3; i++)
    store.incr('k', (err, res) => void (!err && res && counts.push({ current: res.current, ttl: res.ttl })), 5000, 2);
  assert.deepEqual(
    counts.map((c) => c.current),
    [1, 2, 3],
  );
  assert.ok(counts.every((c) => c.ttl > 0 && c.ttl <= 5000));
});

function refusal(loaded: unknown, name: 'LocalStore' | 'RedisStore' = 'LocalStore'): SagawayError {
  try {
    checkStore(loaded, name, '99.0.0');
  } catch (err) {
    assert.ok(err instanceof SagawayError);
    assert.equal(err.code, 'INTERNAL');
    assert.match(err.message, new RegExp(`@fastify/rate-limit 99\\.0\\.0 store/${name}\\.js`));
    assert.ok(err.message.includes(STORE_VERSION_CHECKED));
    return err;
  }
  assert.fail('a store of another shape was accepted');
}

test('a store module that is not a constructor with incr(key, cb, window, max) is refused', () => {
  assert.match(refusal({ incr() {} }).message, /not a constructor/);
  assert.match(refusal(class {}).message, /no incr/);
  // a promise-style incr (key, window) -> Promise
  assert.match(
    refusal(
      class {
        incr(_key: string, _windowMs: number) {
          return Promise.resolve({ current: 1, ttl: 1 });
        }
      },
      'RedisStore',
    ).message,
    /no incr/,
  );
});

test('a local store that answers later, or in seconds, or does not count, is refused', () => {
  const store = (answer: (n: number, windowMs: number, cb: (err: Error | null, res: Count | null) => void) => void) =>
    class {
      n = 0;
      incr(_key: string, cb: (err: Error | null, res: Count | null) => void, windowMs: number, _max: number) {
        answer(++this.n, windowMs, cb);
      }
    };
  assert.match(refusal(store((n, w, cb) => setImmediate(() => cb(null, { current: n, ttl: w })))).message, /probe/);
  assert.match(refusal(store((n, w, cb) => cb(null, { current: n, ttl: w / 1000 }))).message, /probe/);
  assert.match(refusal(store((_n, w, cb) => cb(null, { current: 1, ttl: w }))).message, /probe/);
  // the same shape that answers at once, in ms, counting: accepted
  assert.equal(
    typeof checkStore(
      store((n, w, cb) => cb(null, { current: n, ttl: w })),
      'LocalStore',
      '99.0.0',
    ),
    'function',
  );
});
