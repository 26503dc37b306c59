import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import type { RawSaga } from '../../config/schema.js';
import { startTestHost, type TestHost } from '../../testing/index.js';
import { PROBE_HANDLER } from '../../testing/probe-handler.js';
import { resolveEffectiveSettings } from '../../config/effective-settings.js';

/** start -> e -> ok | bad. The event's output lands at `out` (unless the meta says otherwise), and `out` is the response. */
function saga(id: string, meta: Record<string, unknown>, extraSteps: RawSaga['steps'] = []): RawSaga {
  const own = meta['outputElement'] !== undefined;
  if (!own) meta = { ...meta, outputElement: '$.out' };
  return {
    id,
    path: `/${id}`,
    methods: ['GET', 'POST'],
    steps: [
      { id: 'start', type: 'start', links: [{ to: 'e' }] },
      {
        id: 'e',
        type: 'event',
        eventMeta: { version: 0, ...meta } as never,
        links: [
          { to: 'ok', when: ['SUCCESS'] },
          { to: 'bad', when: ['*'] },
        ],
      },
      { id: 'ok', type: 'success', outputElement: own ? '$' : 'out' },
      { id: 'bad', type: 'fail' },
      ...extraSteps,
    ],
  };
}

describe('preconfigured actions and stream overrides (DESIGN §6.6)', () => {
  test('all five layers at once, in order', () => {
    const binding = {
      name: 'S',
      handler: 'probe',
      system: 'local',
      meta: {
        'parameters.a': { default: 'stream-default' },
        'parameters.b': { default: 'stream-default' },
        'parameters.c': { default: 'stream-default' },
        'parameters.e': { override: 'stream-override' },
        'parameters.f': { override: 'stream-override' },
      },
    };
    const actions = {
      Look: {
        alias: 'Look',
        meta: {
          action: { override: 'Seen' },
          'parameters.a': { default: 'action-default' },
          'parameters.c': { default: 'action-default' },
          'parameters.d': { override: 'action-override' },
          'parameters.e': { override: 'action-override' },
          domain: { default: 'from-action' },
        },
      },
    };
    const eff = resolveEffectiveSettings(
      { action: 'Look', version: 0, parameters: { a: 'step', d: 'step', f: 'step', g: 'step' } },
      binding,
      actions,
    );
    assert.equal(eff.handler, 'probe', 'inferred from the stream binding');
    assert.equal(eff.action, 'Seen', 'the structural action names the real function');
    assert.equal(eff.domain, 'from-action');
    assert.deepEqual(eff.parameters, {
      a: 'step', // step beats both defaults
      b: 'stream-default', // only a stream default
      c: 'action-default', // action default beats stream default
      d: 'action-override', // action override beats the step
      e: 'stream-override', // stream override beats action override
      f: 'stream-override', // stream override beats the step
      g: 'step',
    });
  });

  let h: TestHost;
  before(async () => {
    h = await startTestHost(
      {
        runners: {
          orch: {
            handlers: ['./probe.mjs'],
            sagas: [
              saga('remote', { stream: 'S', action: 'Look', parameters: { a: 'step', d: 'step', f: 'step' } }),
              saga('alias', { action: 'Pinned', handler: 'probe', parameters: { mode: 'mine', keep: 1 } }),
              saga('aliasnohandler', { action: 'Pinned2' }),
              saga('nobody', { stream: 'nobody', action: 'Seen' }),
            ],
            actions: {
              Pinned: {
                meta: {
                  action: { override: 'Seen' },
                  'parameters.mode': { override: 'forced' },
                  'parameters.size': { default: 10 },
                },
              },
              Pinned2: {
                handler: 'probe',
                meta: { action: { override: 'Const' }, 'parameters.value': { default: 'from-alias' } },
              },
            },
          },
          exec: {
            handlers: ['./probe.mjs'],
            streams: {
              S: {
                handler: 'probe',
                meta: {
                  'parameters.b': { default: 'stream-default' },
                  'parameters.f': { override: 'stream-override' },
                },
              },
            },
            actions: {
              Look: { meta: { action: { override: 'Seen' }, 'parameters.d': { override: 'action-override' } } },
            },
          },
        },
      },
      { files: { 'probe.mjs': PROBE_HANDLER } },
    );
  });
  after(() => h.close());

  test('an event on a local-system stream runs on the runner that consumes it, with its overrides and handler inference', async () => {
    const r = await h.run('/remote', { runner: 'orch' });
    assert.equal(r.outcome, 'SUCCESS');
    assert.deepEqual((r.response as any).parameters, {
      a: 'step',
      b: 'stream-default',
      d: 'action-override',
      f: 'stream-override',
    });
  });
  test('a structural action on the orchestrating runner: defaults and overrides', async () => {
    const r = await h.run('/alias', { runner: 'orch' });
    assert.deepEqual((r.response as any).parameters, { mode: 'forced', keep: 1, size: 10 });
  });
  test('a structural action may supply the handler of a local step', async () => {
    const r = await h.run('/aliasnohandler', { runner: 'orch' });
    assert.equal(r.response, 'from-alias');
  });
  test('a stream no runner consumes is RUNNER_UNAVAILABLE', async () => {
    const r = await h.run('/nobody', { runner: 'orch' });
    assert.equal(r.error?.code, 'RUNNER_UNAVAILABLE');
  });
});

describe('inject (DESIGN §6.4)', () => {
  const CANARY = `canary-${Math.random().toString(36).slice(2)}`;
  let h: TestHost;
  const lines: string[] = [];
  before(async () => {
    const log = pino(
      { level: 'trace' },
      new Writable({
        write(chunk, _enc, cb) {
          lines.push(String(chunk));
          cb();
        },
      }),
    );
    h = await startTestHost(
      {
        values: { REGION: 'eu-west', LIMIT: 25 },
        secrets: { from: 'env', prefix: 'T_SECRET_' },
        runners: {
          r: {
            handlers: ['./probe.mjs'],
            sagas: [
              saga('vars', {
                handler: 'probe',
                action: 'Seen',
                inject: true,
                inputElement: 'parameters.order',
                domain: 'orders-${{REGION}}',
                parameters: {
                  fromInput: '%%customer%%',
                  typed: '%%qty%%',
                  embedded: 'qty=%%qty%%;obj=%%meta%%',
                  viaPath: '%%who%%',
                  path_who: '$.parameters.user.name',
                  root: '%%$.parameters.flag%%',
                  ctx: '%%@.request.method%%-%%@.user.sub%%',
                  fallback: '%%absent|none%%',
                  value: '${{LIMIT}}',
                  nested: { deep: ['%%customer%%'] },
                },
              }),
              saga('unresolved', { handler: 'probe', action: 'Seen', inject: true, parameters: { x: '%%absent%%' } }),
              saga('unresolvedsecret', {
                handler: 'probe',
                action: 'Seen',
                inject: true,
                parameters: { x: '#{{NOPE}}' },
              }),
              saga('literal', {
                handler: 'probe',
                action: 'Seen',
                parameters: { x: '%%customer%%', y: '#{{TOKEN}}', z: '${{REGION}}' },
              }),
              saga('secondorder', {
                handler: 'probe',
                action: 'Seen',
                inject: true,
                parameters: { x: '%%parameters.text%%' },
              }),
              saga(
                'paths',
                {
                  handler: 'probe',
                  action: 'Const',
                  inject: true,
                  inputElement: 'parameters.%%parameters.which%%',
                  outputElement: '$.%%$.parameters.target%%',
                  parameters: { value: 1 },
                },
                [],
              ),
              saga('secret', {
                handler: 'probe',
                action: 'Leak',
                inject: true,
                parameters: { header: 'Bearer #{{TOKEN}}' },
              }),
              saga('secretecho', {
                handler: 'probe',
                action: 'Seen',
                inject: true,
                parameters: { header: 'Bearer #{{TOKEN}}' },
              }),
            ],
          },
        },
      },
      { files: { 'probe.mjs': PROBE_HANDLER }, env: process.env, log },
    );
    process.env['T_SECRET_TOKEN'] = CANARY;
  });
  after(async () => {
    delete process.env['T_SECRET_TOKEN'];
    await h.close();
  });

  const user = { sub: 'alice', roles: [], claims: {}, anonymous: false };

  test('variables (input-relative, path_NAME, $., @.), defaults, values, typed whole placeholders', async () => {
    const r = await h.run('/vars', {
      user,
      input: { order: { customer: 'c-7', qty: 3, meta: { a: 1 } }, user: { name: 'Ann' }, flag: true },
    });
    assert.equal(r.outcome, 'SUCCESS', JSON.stringify(r.error));
    const seen = r.response as any;
    assert.equal(seen.domain, 'orders-eu-west');
    assert.deepEqual(seen.parameters, {
      fromInput: 'c-7',
      typed: 3,
      embedded: 'qty=3;obj={"a":1}',
      viaPath: 'Ann',
      path_who: '$.parameters.user.name',
      root: true,
      ctx: 'GET-alice',
      fallback: 'none',
      value: '25',
      nested: { deep: ['c-7'] },
    });
  });
  test('an unresolved variable without default is INJECT_UNRESOLVED', async () => {
    const r = await h.run('/unresolved');
    assert.equal(r.error?.code, 'INJECT_UNRESOLVED');
    assert.equal((await h.run('/unresolvedsecret')).error?.code, 'INJECT_UNRESOLVED');
  });
  test('without inject, placeholders are passed literally', async () => {
    const r = await h.run('/literal', { input: { customer: 'x' } });
    assert.deepEqual((r.response as any).parameters, { x: '%%customer%%', y: '#{{TOKEN}}', z: '${{REGION}}' });
  });
  test('text from the payload is never resolved again (no second-order injection)', async () => {
    const r = await h.run('/secondorder', { input: { text: '#{{TOKEN}} ${{REGION}} %%other%%', other: 'no' } });
    assert.equal((r.response as any).parameters.x, '#{{TOKEN}} ${{REGION}} %%other%%');
    assert.doesNotMatch(JSON.stringify(r), new RegExp(CANARY));
  });
  test('inputElement and outputElement can be injected', async () => {
    const r = await h.run('/paths', { input: { which: 'b', target: 'result', b: {} } });
    assert.equal((r.response as any).result, 1);
  });
  test('a secret never reaches the response, the error or the log', async () => {
    lines.length = 0;
    const r = await h.run('/secret');
    assert.equal(r.outcome, 'FAIL');
    assert.equal(r.error?.code, 'UPSTREAM_REFUSED');
    assert.equal(r.http, 502);
    const all = JSON.stringify(r) + lines.join('');
    assert.ok(lines.length > 0, 'the action logged');
    assert.ok(all.includes('[REDACTED]'));
    assert.doesNotMatch(all, new RegExp(CANARY));
    const echoed = await h.run('/secretecho');
    assert.doesNotMatch(JSON.stringify(echoed), new RegExp(CANARY), 'even an action that echoes its parameters');
  });
});

describe('versions and handlers (DESIGN §6.1)', () => {
  test('a version the handler lacks is a load error naming the version; an existing one runs', async () => {
    await assert.rejects(
      startTestHost(
        {
          runners: {
            r: { handlers: ['./probe.mjs'], sagas: [saga('v1', { handler: 'probe', action: 'Reserve', version: 1 })] },
          },
        },
        { files: { 'probe.mjs': PROBE_HANDLER } },
      ),
      (e: any) => /eventMeta\.version: .*ACTION_VERSION_UNSUPPORTED/.test(e.message),
    );
    const h = await startTestHost(
      {
        runners: {
          r: { handlers: ['./probe.mjs'], sagas: [saga('v2', { handler: 'probe', action: 'Reserve', version: 2 })] },
        },
      },
      { files: { 'probe.mjs': PROBE_HANDLER } },
    );
    try {
      assert.deepEqual((await h.run('/v2')).response, { v: 2 });
    } finally {
      await h.close();
    }
  });
  test('handler required on local', async () => {
    await assert.rejects(
      startTestHost(
        { runners: { r: { handlers: ['./probe.mjs'], sagas: [saga('nohandler', { action: 'Echo' })] } } },
        { files: { 'probe.mjs': PROBE_HANDLER } },
      ),
      (e: any) => /eventMeta\.handler: required when stream is local/.test(e.message),
    );
  });
});
