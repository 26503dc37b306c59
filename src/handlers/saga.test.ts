import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fakeEnv } from '../../test/states/fake-handler-env.js';
import type { SagaResult } from '../core/types.js';
import { isAck } from './api.js';
import { sagaHandler } from './saga.js';

test('StartSaga passes target and input and answers the nested outcome', async () => {
  const outcomes: Record<string, SagaResult> = {
    ok: { outcome: 'SUCCESS', http: 200, response: { total: 3 } },
    acked: { outcome: 'ACK', http: 202, response: { taskId: 't1' } },
    failed: { outcome: 'FAIL', http: 418, error: { code: 'TEAPOT', message: 'short and stout', http: 418 } },
    slow: { outcome: 'TIMEOUT', http: 504, error: { code: 'SAGA_TIMEOUT', message: 'took too long', http: 504 } },
    bare: { outcome: 'TIMEOUT', http: 504 },
  };
  const f = fakeEnv({}, [sagaHandler], (t) => outcomes[t.saga ?? 'ok'] as SagaResult);
  assert.deepEqual(await f.call('saga', 'StartSaga', { n: 1 }, { parameters: { saga: 'ok' } }), { total: 3 });
  assert.deepEqual(f.sagaCalls[0], { target: { saga: 'ok' }, input: { n: 1 } });

  const acked = await f.call('saga', 'StartSaga', {}, { parameters: { saga: 'acked' } });
  assert.ok(isAck(acked));
  assert.deepEqual(acked.output, { taskId: 't1' });

  await assert.rejects(f.call('saga', 'StartSaga', {}, { parameters: { saga: 'failed' } }), {
    code: 'TEAPOT',
    message: 'short and stout',
    http: 418,
  });
  await assert.rejects(f.call('saga', 'StartSaga', {}, { parameters: { saga: 'slow' } }), {
    code: 'SAGA_TIMEOUT',
    http: 504,
  });
  await assert.rejects(f.call('saga', 'StartSaga', {}, { parameters: { saga: 'bare' } }), {
    code: 'SAGA_TIMEOUT',
    http: 504,
  });

  await f.call('saga', 'StartSaga', undefined, { parameters: { path: '/orders/7', method: 'post' } });
  assert.deepEqual(f.sagaCalls.at(-1), { target: { path: '/orders/7', method: 'POST' }, input: {} });
  await assert.rejects(f.call('saga', 'StartSaga', {}, {}), { code: 'VALIDATION_FAILED' });
  await assert.rejects(f.call('saga', 'StartSaga', 'text', { parameters: { saga: 'ok' } }), {
    code: 'VALIDATION_FAILED',
  });
});

test('a saga that starts itself is stopped by the nesting limit', async () => {
  let calls = 0;
  const f = fakeEnv({}, [sagaHandler], () => ({ outcome: 'SUCCESS', http: 200 }));
  // runSaga that runs the StartSaga step of the same saga again, as a self-referencing saga would
  f.env.runSaga = async (_t, input, parent) => {
    calls++;
    try {
      const out = await f.handlers.get('saga')?.actions['StartSaga']?.[0]?.(input, parent);
      return { outcome: 'SUCCESS', http: 200, response: out };
    } catch (err) {
      const e = err as { code: string; message: string; http: number };
      return { outcome: 'FAIL', http: e.http, error: { code: e.code, message: e.message, http: e.http } };
    }
  };
  // the handler was made with the env object, whose runSaga we just replaced
  await assert.rejects(f.call('saga', 'StartSaga', {}, { parameters: { saga: 'self' } }), {
    code: 'STEP_LIMIT_EXCEEDED',
  });
  assert.equal(calls, 8);
});
