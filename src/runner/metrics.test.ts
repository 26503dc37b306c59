import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { clusterMetrics } from './metrics.js';

/** The cluster's self-checks on /metrics: a guard that switched its patch off is counted, and seen at 0 before. */

test('sagaway_transport_guards_off_total follows the cluster, per guard', async () => {
  const registry = new Registry();
  let off = 0;
  clusterMetrics(registry, { guardsOff: () => ({ nats_coalesce: off }) });
  const value = async () => (await registry.getSingleMetric('sagaway_transport_guards_off_total')!.get()).values;
  assert.deepEqual(
    (await value()).map((v) => [v.labels['guard'], v.value]),
    [['nats_coalesce', 0]],
  );
  off = 2;
  assert.deepEqual(
    (await value()).map((v) => [v.labels['guard'], v.value]),
    [['nats_coalesce', 2]],
  );
  off = 3;
  assert.match(await registry.metrics(), /^sagaway_transport_guards_off_total\{guard="nats_coalesce"\} 3$/m);
});
