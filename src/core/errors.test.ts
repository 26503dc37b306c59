import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ERROR_CODES, SagawayError, toErrorInfo } from './errors.js';

test('docs/errors.md lists every declared code with its status, and nothing else', () => {
  const doc = readFileSync('docs/errors.md', 'utf8');
  const documented = [...doc.matchAll(/^\| `([A-Z_]+)` \| ([^|]+) \|/gm)].map(
    (m) => [m[1] as string, (m[2] as string).trim()] as const,
  );
  assert.deepEqual(documented.map(([c]) => c).sort(), Object.keys(ERROR_CODES).sort());
  for (const [code, http] of documented) {
    if (/^\d+$/.test(http)) assert.equal(Number(http), ERROR_CODES[code as keyof typeof ERROR_CODES].http, code);
  }
});

test('unknown errors never leak their message; coded errors keep theirs; Node errors are internal', () => {
  assert.deepEqual(toErrorInfo(new Error('db at 10.1.2.3 refused')), {
    code: 'INTERNAL',
    message: 'Internal Server Error',
    http: 500,
  });
  assert.deepEqual(toErrorInfo(Object.assign(new Error('none left'), { code: 'OUT_OF_STOCK', http: 409 })), {
    code: 'OUT_OF_STOCK',
    message: 'none left',
    http: 409,
  });
  const sys = Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:5432'), {
    code: 'ECONNREFUSED',
    errno: -111,
    syscall: 'connect',
  });
  assert.equal(toErrorInfo(sys, 'ACTION_FAILED').code, 'ACTION_FAILED');
  assert.equal(toErrorInfo(Object.assign(new Error('x'), { code: 'ERR_INVALID_ARG_TYPE' })).code, 'INTERNAL');
  assert.equal(new SagawayError('STALE_VERSION', 'x').http, 409);
  assert.equal(new SagawayError('SAGA_TIMEOUT', 'x').retryable, true);
});
