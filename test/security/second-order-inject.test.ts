import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createGateway, type Gateway } from '../../src/gateway/server.js';
import { startTestHost, type TestHost } from '../../src/testing/index.js';
import { PROBE_HANDLER } from '../../src/testing/probe-handler.js';
import { API_TOKEN, HOSTILE_TEXTS, REGION, assertNoLeak, capturingLogger, secrets } from './inject-canary.js';

/**
 * Issue 9 item 1: caller data is never resolved by inject, on any path an event's settings are
 * built by. Each saga below puts the caller's `note` into a setting of an event with
 * `inject: true` (directly, through an action record's `%%param_note%%` slot, a structural
 * action, a stream override, or a nested saga), and the probe handler answers the parameters it
 * received. The note must arrive exactly as sent, whatever placeholder it imitates, and the
 * secret canary must not appear in any form in the response, the error, or the log lines.
 */

const seen = (extra: Record<string, unknown> = {}) => ({
  handler: 'probe',
  action: 'Seen',
  version: 0,
  inject: true,
  inputElement: 'parameters',
  outputElement: '$.out',
  ...extra,
});

function saga(id: string, eventMeta: Record<string, unknown>) {
  return {
    id,
    path: `/${id}`,
    methods: ['GET', 'POST'],
    steps: [
      { id: 'start', type: 'start', links: [{ to: 'e' }] },
      { id: 'e', type: 'event', autoFail: true, eventMeta, links: [{ to: 'ok' }] },
      { id: 'ok', type: 'success', outputElement: 'out' },
    ],
  };
}

const RECORDS = [
  {
    id: 'withInject',
    data: {
      handler: 'probe',
      action: 'Seen',
      version: 0,
      inject: true,
      // the record's own placeholders still resolve: a variable and a secret
      parameters: {
        note: '%%param_note%%',
        inline: '<%%param_note%%>',
        tag: '%%tag|none%%',
        token: '#{{API_TOKEN}}',
      },
    },
  },
  {
    id: 'leaky',
    data: { handler: 'probe', action: 'Leak', version: 0, inject: true, parameters: { header: 'h=%%param_note%%' } },
  },
  {
    id: 'viaDomain',
    data: {
      handler: 'probe',
      action: 'Seen',
      version: 0,
      inject: true,
      domain: '%%param_note%%',
      outputElement: '%%param_out|$.x%%',
      parameters: {},
    },
  },
];

const CONFIG = {
  gateway: {
    apis: [
      { path: '/direct', runner: 'web', public: true, methods: ['GET', 'POST'] },
      { path: '/record', runner: 'web', public: true, methods: ['GET', 'POST'] },
      { path: '/recordfeed', runner: 'web', public: true },
    ],
  },
  values: { REGION },
  states: { actions: { type: 'memory', seed: './actions.json' } },
  runners: {
    web: {
      handlers: ['./probe.mjs', 'action', 'saga'],
      sagas: [
        saga('direct', seen({ parameters: { note: '%%note%%', inline: '<%%note%%>' } })),
        saga(
          'record',
          seen({
            handler: 'action',
            action: 'TakeAction',
            parameters: { action: 'withInject', note: '%%note%%', tag: 'T' },
          }),
        ),
        // without inject on the step: the raw request value reaches the slot through the input
        saga('recordplain', {
          handler: 'action',
          action: 'TakeAction',
          version: 0,
          inject: true,
          inputElement: 'parameters',
          outputElement: '$.out',
          parameters: { action: 'withInject', note: '%%$.parameters.note%%' },
        }),
        saga(
          'leaky',
          seen({ handler: 'action', action: 'TakeAction', parameters: { action: 'leaky', note: '%%note%%' } }),
        ),
        saga(
          'viadomain',
          seen({ handler: 'action', action: 'TakeAction', parameters: { action: 'viaDomain', note: '%%note%%' } }),
        ),
        {
          ...saga(
            'recordfeed',
            seen({ handler: 'action', action: 'TakeAction', parameters: { action: 'withInject', note: '%%note%%' } }),
          ),
          steps: [
            { id: 'start', type: 'start', links: [{ to: 'e' }] },
            {
              id: 'e',
              type: 'event',
              autoFail: true,
              eventMeta: seen({
                handler: 'action',
                action: 'TakeAction',
                parameters: { action: 'withInject', note: '%%note%%' },
              }),
              links: [{ to: 'shape' }],
            },
            { id: 'shape', type: 'transform', expression: '{ "list": [out.parameters] }', links: [{ to: 'ok' }] },
            { id: 'ok', type: 'success' },
          ],
        },
        saga('structural', { action: 'NoteAlias', version: 0, inputElement: 'parameters', outputElement: '$.out' }),
        saga('stream', { stream: 'S', action: 'Seen', version: 0, inputElement: 'parameters', outputElement: '$.out' }),
        saga('outer', {
          handler: 'saga',
          action: 'StartSaga',
          version: 0,
          inject: true,
          inputElement: 'parameters',
          outputElement: '$.out',
          parameters: { path: '/direct', method: 'POST' },
        }),
      ],
      actions: {
        NoteAlias: {
          handler: 'probe',
          meta: {
            action: { override: 'Seen' },
            inject: { override: true },
            'parameters.note': { override: '%%note%%' },
            'parameters.inline': { default: '<%%note%%>' },
          },
        },
      },
    },
    exec: {
      handlers: ['./probe.mjs'],
      streams: {
        S: {
          handler: 'probe',
          meta: {
            inject: { override: true },
            'parameters.note': { override: '%%note%%' },
            'parameters.inline': { default: '<%%note%%>' },
          },
        },
      },
    },
  },
};

interface Seen {
  parameters: Record<string, unknown>;
  domain: string | null;
}

describe('second-order inject: caller data stays literal on every path', () => {
  let h: TestHost;
  let gw: Gateway;
  const captured = capturingLogger();
  before(async () => {
    h = await startTestHost(CONFIG as never, {
      files: { 'probe.mjs': PROBE_HANDLER, 'actions.json': JSON.stringify(RECORDS) },
      secrets,
      log: captured.log,
    });
    gw = await createGateway({ settings: h.settings, service: h.host, log: captured.log });
  });
  after(async () => {
    await gw.close();
    await h.close();
    assertNoLeak(captured.lines.join(''), 'the log');
  });

  async function run(path: string, note: string): Promise<Seen> {
    const r = await h.run(path, { method: 'POST', input: { note, other: 'OTHER', tag: 'from-caller' } });
    const text = JSON.stringify(r);
    assertNoLeak(text, `${path} with ${note}`);
    assert.equal(r.outcome, 'SUCCESS', `${path} with ${note}: ${text}`);
    return r.response as Seen;
  }

  for (const note of HOSTILE_TEXTS) {
    test(`direct step: ${note}`, async () => {
      const out = await run('/direct', note);
      assert.equal(out.parameters['note'], note);
      assert.equal(out.parameters['inline'], `<${note}>`);
    });

    test(`action record: ${note}`, async () => {
      for (const path of ['/record', '/recordplain']) {
        const out = await run(path, note);
        assert.equal(out.parameters['note'], note, path);
        assert.equal(out.parameters['inline'], `<${note}>`, path);
        // the record's own placeholders were resolved in the same pass
        assert.equal(out.parameters['tag'], 'from-caller', `${path}: the record's own variable resolved`);
        assert.equal(out.parameters['token'], '[REDACTED]', `${path}: the record's secret resolved and was scrubbed`);
      }
    });

    test(`structural action: ${note}`, async () => {
      const out = await run('/structural', note);
      assert.equal(out.parameters['note'], note);
      assert.equal(out.parameters['inline'], `<${note}>`);
    });

    test(`stream override: ${note}`, async () => {
      const out = await run('/stream', note);
      assert.equal(out.parameters['note'], note);
      assert.equal(out.parameters['inline'], `<${note}>`);
    });

    test(`saga.StartSaga: ${note}`, async () => {
      const out = await run('/outer', note);
      assert.equal(out.parameters['note'], note);
    });
  }

  test('an action record whose slot feeds the domain and outputElement: the caller text is the domain, never resolved', async () => {
    const r = await h.run('/viadomain', { method: 'POST', input: { note: '#{{CANARY}}' } });
    assertNoLeak(JSON.stringify(r), 'viadomain');
    assert.equal(r.outcome, 'SUCCESS', JSON.stringify(r));
    assert.equal((r.response as Seen).domain, '#{{CANARY}}');
  });

  test('the error and the log of a failing record hold the literal caller text, never the secret', async () => {
    const r = await h.run('/leaky', { method: 'POST', input: { note: '#{{CANARY}} ${{REGION}}' } });
    assertNoLeak(JSON.stringify(r), 'leaky');
    assert.equal(r.outcome, 'FAIL');
    assert.equal(r.error?.code, 'UPSTREAM_REFUSED');
    assert.match(r.error?.message ?? '', /h=#\{\{CANARY\}\} \$\{\{REGION\}\}/);
    assert.ok(
      captured.lines.some((l) => l.includes('calling with h=#{{CANARY}}')),
      'the log line holds the literal text',
    );
  });

  test('over the gateway: the one-shot and the stream forms answer the literal text', async () => {
    for (const note of HOSTILE_TEXTS) {
      const res = await gw.app.inject({
        method: 'POST',
        url: '/api/request/record',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ note }),
      });
      assertNoLeak(res.body, `POST /api/request/record ${note}`);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal((JSON.parse(res.body) as Seen).parameters['note'], note);

      const q = new URLSearchParams({ note }).toString();
      const get = await gw.app.inject({ method: 'GET', url: `/api/request/direct?${q}` });
      assertNoLeak(get.body, `GET /api/request/direct ${note}`);
      assert.equal((JSON.parse(get.body) as Seen).parameters['note'], note);
    }
    const stream = await gw.app.inject({
      method: 'GET',
      url: `/api/stream/recordfeed?${new URLSearchParams({ note: '#{{CANARY}}' }).toString()}`,
    });
    assertNoLeak(stream.body, 'the SSE feed');
    assert.ok(stream.body.includes('"note":"#{{CANARY}}"'), stream.body.slice(0, 300));
    assert.ok(stream.body.includes('"token":"[REDACTED]"'), stream.body.slice(0, 300));
  });

  test('control: the API token is a real secret that the record resolved (so the canary checks can fail)', () => {
    assert.equal(secrets.get('API_TOKEN'), API_TOKEN);
  });
});
