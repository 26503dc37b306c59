import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Cancel } from '../../core/cancel.js';
import { silentLogger } from '../../core/logger.js';
import type { EventMessage } from '../../core/messages.js';
import { executeEvent, type ExecutorDeps } from './execute.js';
import { HandlerRegistry } from './registry.js';
import { runnerSettingsFor } from '../../testing/settings.js';

function deps(): ExecutorDeps {
  const registry = new HandlerRegistry();
  registry.add({ name: 'inv', actions: { Reserve: { 0: () => 'v0', 2: () => 'v2' } } }, 'test');
  return {
    runner: runnerSettingsFor({ maxSteps: 10 }, {}, 'r'),
    registry,
    values: {},
    secrets: { get: () => undefined },
    log: silentLogger(),
    state: () => {
      throw new Error('no state');
    },
  };
}

function event(meta: EventMessage['meta']): EventMessage {
  return {
    id: 'e1',
    runId: 'run',
    stepId: 's',
    idempotencyKey: 'run:s',
    stream: 'remote',
    meta,
    payload: { parameters: {} },
    context: { request: { method: 'GET', path: '/', id: 'r', query: {} }, user: null },
    deadline: Date.now() + 1000,
  };
}

const signal = new Cancel();

test('strict versions at run time: no fallback to another version', async () => {
  const r1 = await executeEvent(deps(), event({ handler: 'inv', action: 'Reserve', version: 1 }), undefined, signal);
  assert.equal(r1.status, 'FAIL');
  assert.equal(r1.error?.code, 'ACTION_VERSION_UNSUPPORTED');
  const r2 = await executeEvent(deps(), event({ handler: 'inv', action: 'Reserve', version: 2 }), undefined, signal);
  assert.equal(r2.output, 'v2');
});

test('unknown handler and action, and a missing handler with no stream binding', async () => {
  assert.equal(
    (await executeEvent(deps(), event({ handler: 'nope', action: 'X', version: 0 }), undefined, signal)).error?.code,
    'HANDLER_NOT_FOUND',
  );
  assert.equal(
    (await executeEvent(deps(), event({ handler: 'inv', action: 'X', version: 0 }), undefined, signal)).error?.code,
    'ACTION_NOT_FOUND',
  );
  assert.equal(
    (await executeEvent(deps(), event({ action: 'Reserve', version: 0 }), undefined, signal)).error?.code,
    'HANDLER_REQUIRED',
  );
  const inferred = await executeEvent(
    deps(),
    event({ action: 'Reserve', version: 0 }),
    { name: 'S', handler: 'inv', system: 'local', meta: {} },
    signal,
  );
  assert.equal(inferred.output, 'v0');
});
