import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError } from '../../src/core/errors.js';
import { startTestHost } from '../../src/testing/index.js';
import { PROBE_HANDLER } from '../../src/testing/probe-handler.js';

/**
 * Load-time checks of issue 12 that need the runner around the saga: the undo's handler, action
 * and version exist (local), its stream's system exists, and `onFail` names a saga of the runner.
 */

function config(compensate: Record<string, unknown>, onFail?: string) {
  return {
    runners: {
      r: {
        handlers: ['./probe.mjs'],
        sagas: [
          {
            id: 'main',
            path: '/main',
            ...(onFail ? { onFail: { saga: onFail } } : {}),
            steps: [
              { id: 'start', type: 'start', links: [{ to: 'e' }] },
              {
                id: 'e',
                type: 'event',
                eventMeta: { handler: 'probe', action: 'Echo', version: 0 },
                compensate: { eventMeta: compensate },
                links: [{ to: 'ok' }],
              },
              { id: 'ok', type: 'success' },
            ],
          },
          {
            id: 'notify',
            path: '/notify',
            steps: [
              { id: 'start', type: 'start', links: [{ to: 'ok' }] },
              { id: 'ok', type: 'success' },
            ],
          },
        ],
      },
    },
  };
}

async function problems(cfg: object): Promise<string[]> {
  try {
    const h = await startTestHost(cfg as never, { files: { 'probe.mjs': PROBE_HANDLER } });
    await h.close();
    return [];
  } catch (e) {
    assert.ok(e instanceof ConfigError, String(e));
    return e.issues.filter((i) => i.severity === 'error').map((i) => `${i.path}: ${i.message}`);
  }
}

describe('load-time checks of compensations and onFail', () => {
  test('a valid undo and onFail load', async () => {
    assert.deepEqual(await problems(config({ handler: 'probe', action: 'Echo', version: 0 }, 'notify')), []);
  });

  test("the undo's action and version must exist on the local handler", async () => {
    const version = await problems(config({ handler: 'probe', action: 'Reserve', version: 1 }));
    assert.equal(version.length, 1);
    assert.match(
      version[0]!,
      /^runners\.r\.sagas\[0\]\.steps\[1\]\.compensate\.eventMeta\.version: .*ACTION_VERSION_UNSUPPORTED/,
    );
    const action = await problems(config({ handler: 'probe', action: 'Nope', version: 0 }));
    assert.match(action[0]!, /compensate\.eventMeta\.action: .*ACTION_NOT_FOUND/);
    const handler = await problems(config({ handler: 'nobody', action: 'X', version: 0 }));
    assert.match(handler[0]!, /compensate\.eventMeta\.handler: handler "nobody" is not loaded/);
    const required = await problems(config({ action: 'X', version: 0 }));
    assert.match(required[0]!, /compensate\.eventMeta\.handler: required when stream is local/);
  });

  test("the undo's stream names a known system", async () => {
    const p = await problems(config({ handler: 'probe', action: 'Echo', version: 0, stream: 's', system: 'nowhere' }));
    assert.match(p[0]!, /compensate\.eventMeta\.system: unknown system "nowhere"/);
  });

  test('onFail names a saga of the same runner', async () => {
    const p = await problems(config({ handler: 'probe', action: 'Echo', version: 0 }, 'missing'));
    assert.deepEqual(p, ['runners.r.sagas[0].onFail.saga: no saga "missing" in runner "r"']);
  });
});
