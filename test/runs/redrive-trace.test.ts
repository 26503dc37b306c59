import { test } from 'node:test';
import assert from 'node:assert/strict';
import { installTracing, type RunStartKind, type Tracing } from '../../src/core/otel.js';
import { config, handled, post, statusWhen, world } from './runs-world.js';

/** A redriven run's span says so (docs/tracing.md: `sagaway.run.start` is `redrive`), not `resume`. */

const SQLITE = 'jr: { type: sqlite, file: ./journal.db }';

test('the run span of a redriven run starts as a redrive', async (t) => {
  const kinds: RunStartKind[] = [];
  const span = { carrier: undefined, end: () => undefined, tried: () => undefined };
  const tracer: Tracing = {
    request: () => ({ carrier: undefined, end: () => undefined }),
    run: (start) => {
      kinds.push(start.kind);
      return { ...span, step: () => span };
    },
    action: () => span,
    shutdown: async () => undefined,
  };
  const w = await world(config(SQLITE));
  installTracing(tracer);
  t.after(async () => {
    installTracing(undefined);
    await w.close();
  });
  const first = await post(w, '/api/request/orders', { order: 'o-1' });
  assert.equal(first.status, 503);
  handled().fixed = true;
  assert.equal((await post(w, `/api/runs/${first.id}/redrive`, { reason: 'fixed' })).status, 202);
  await statusWhen(w, first.id, (s) => s.status === 'DONE');
  assert.deepEqual(kinds, ['request', 'redrive']);
});
