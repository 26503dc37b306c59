import assert from 'node:assert/strict';
import { test } from 'node:test';
import { settingsFor, runnerSettingsFor } from './settings.js';

/** The test settings builder: the real compile stage's defaults, and compiled overrides over them. */

const saga = {
  id: 's',
  path: '/s',
  steps: [
    { id: 'start', type: 'start' as const, links: [{ to: 't' }] },
    { id: 't', type: 'transform' as const, expression: '{"n": 1}', links: [{ to: 'ok' }] },
    { id: 'ok', type: 'success' as const },
  ],
};

test('every compiled default is there, from the compile stage: none is left for consumers to fill', () => {
  const s = settingsFor();
  assert.equal(typeof s.gateway.openapi, 'object', 'the OpenAPI document is on, with its settings');
  assert.equal(s.gateway.validateResponses, false);
  assert.equal(s.gateway.console.path, '/console');
  assert.equal(s.gateway.idempotency.ttlMs, 24 * 3600_000);
  assert.equal(s.gateway.limits.rate?.max, 200);
  assert.equal(s.systems['local']?.type, 'local');
  const r = runnerSettingsFor();
  assert.equal(r.name, 'main');
  assert.equal(r.statusTtlMs, 24 * 3600_000);
  assert.equal(r.statusMaxBytes, 64 * 1024);
  assert.equal(r.journalRetentionMs, 7 * 24 * 3600_000);
  assert.equal(r.resumeIntervalMs, 5000);
});

test('the configuration is compiled (durations, nats defaults, inline sagas planned); overrides win', () => {
  const s = settingsFor(
    {
      systems: { bus: { type: 'nats', servers: ['nats://127.0.0.1:4222'], advertiseInterval: '300ms' } },
      runners: { main: { sagas: [saga], resumeInterval: '500ms' } },
    },
    { gateway: { stream: { minWaitMs: 10 }, limits: { rate: undefined } }, runners: { main: { maxSteps: 7 } } },
  );
  const bus = s.systems['bus'];
  assert.ok(bus?.type === 'nats');
  assert.equal(bus.advertiseIntervalMs, 300);
  assert.equal(bus.ackWaitMs, 30_000);
  const main = s.runners['main']!;
  assert.equal(main.resumeIntervalMs, 500);
  assert.equal(main.maxSteps, 7);
  assert.deepEqual(
    main.plans.map((p) => [p.id, p.timeoutMs]),
    [['s', 10_000]],
  );
  assert.deepEqual(main.sagas[0]?.source, { file: '/tmp/sagaway-test.yaml', at: ['runners', 'main', 'sagas', 0] });
  assert.equal(s.gateway.stream.minWaitMs, 10);
  assert.equal(s.gateway.stream.maxWaitMs, 300_000, 'the rest of the block keeps its defaults');
  assert.equal(s.gateway.limits.rate, undefined);
});

test('a configuration with errors throws with each issue and where it is', () => {
  const broken = { ...saga, steps: [saga.steps[0]!, { id: 'ok', type: 'success' as const }] };
  assert.throws(
    () => settingsFor({ runners: { main: { sagas: [broken] } } }),
    /runners\.main\.sagas\.0\.steps\.0\.links\.0\.to: unknown step "t"/,
  );
});
