import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { stringify } from 'yaml';
import { loadConfig } from '../config/load.js';
import { ConfigError } from '../core/errors.js';
import { checkDistributed } from './check-distributed.js';

function configWith(meta: Record<string, unknown>) {
  return {
    systems: {
      bus: { type: 'nats', servers: ['nats://127.0.0.1:4222'] },
      api: { type: 'http', baseUrl: 'https://example.com' },
    },
    defaultSystem: 'bus',
    runners: {
      orch: {
        sagas: [
          {
            id: 's',
            path: '/s',
            steps: [
              { id: 'start', type: 'start', links: [{ to: 'e' }] },
              {
                id: 'e',
                type: 'event',
                eventMeta: { action: 'A', version: 0, stream: 'prices', ...meta },
                links: [{ to: 'ok' }],
              },
              { id: 'ok', type: 'success' },
            ],
          },
        ],
      },
      v1: { deployment: '1', streams: { prices: { handler: 'p' } } },
      v2: { deployment: '2', streams: { prices: { handler: 'p' } } },
    },
  };
}

async function load(config: object) {
  const dir = await mkdtemp(join(tmpdir(), 'sagaway-check-'));
  try {
    await writeFile(join(dir, 'sagaway.yaml'), stringify(config));
    return await loadConfig(join(dir, 'sagaway.yaml'), { check: async (s, report) => checkDistributed(s, report) });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('validate warns when a stream has several consuming deployments and the step names none', async () => {
  const { warnings } = await load(configWith({}));
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!.message, /consumed by v1\/1, v2\/2 .* names no deployments/);
  assert.equal(warnings[0]!.path, 'runners.orch.sagas[0].steps[1].eventMeta.stream');
});

test('no warning when the step names its deployments', async () => {
  const { warnings } = await load(configWith({ deployments: ['2'] }));
  assert.deepEqual(warnings, []);
});

test('responseSystem must be a nats system', async () => {
  await assert.rejects(load(configWith({ deployments: ['1'], responseSystem: 'api' })), (e: unknown) => {
    assert.ok(e instanceof ConfigError);
    assert.match(
      e.issues.map((i) => `${i.path}: ${i.message}`).join('\n'),
      /eventMeta\.responseSystem: "api" is not a nats system/,
    );
    return true;
  });
});
