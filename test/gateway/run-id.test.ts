import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { EventSource } from 'eventsource';
import { silentLogger } from '../../src/core/logger.js';
import { createGateway, type Gateway } from '../../src/gateway/server.js';
import { startTestHost, type TestHost } from '../../src/testing/index.js';
import { feedService, ok, ScriptedService, startGateway } from './harness.js';

/**
 * The run id is the request id (issue 12): the idempotency keys and logs of a one-shot run carry
 * the `X-Request-Id` the client got back (gateway/http/helpers/request-id.ts), compensations included;
 * every poll of a stream is a run of its own, `<requestId>.<n>`, so polls never share a key.
 */

test('one-shot: the run id the runner gets is the X-Request-Id of the response', async () => {
  const svc = new ScriptedService(() => ok({}));
  const { gw, close } = await startGateway(svc);
  try {
    const r = await gw.app.inject({ url: '/api/request/x', headers: { 'x-request-id': 'client-own' } });
    assert.equal(r.statusCode, 200);
    assert.equal(svc.calls[0]!.req.runId, r.headers['x-request-id']);
    assert.notEqual(svc.calls[0]!.req.runId, 'client-own', 'never the client header');
  } finally {
    await close();
  }
});

test('stream: each poll is a run of its own, <requestId>.<n>', async () => {
  const svc = feedService(6, 2);
  const { base, close } = await startGateway(svc, { stream: { minWaitMs: 10, defaultWaitMs: 10 } });
  const es = new EventSource(base + '/api/stream/feed');
  try {
    await new Promise<void>((resolve) => es.addEventListener('end', () => resolve()));
    const requestId = svc.calls[0]!.req.requestId;
    assert.deepEqual(
      svc.calls.map((c) => c.req.runId),
      [1, 2, 3].map((n) => `${requestId}.${n}`),
    );
  } finally {
    es.close();
    await close();
  }
});

const INVENTORY = `
globalThis.__undoKeys = [];
export default {
  name: 'inv',
  actions: {
    Reserve: { 0: (_input, ctx) => ({ key: ctx.idempotencyKey }) },
    Release: { 0: (_input, ctx) => { globalThis.__undoKeys.push(ctx.idempotencyKey); return {}; } },
    Refuse: { 0: (_input, ctx) => ctx.fail('OUT_OF_MONEY', 'declined', 402) },
  },
};
`;

let h: TestHost;
let gw: Gateway;
before(async () => {
  h = await startTestHost(
    {
      gateway: { apis: [{ path: '/', runner: 'r', public: true }] },
      runners: {
        r: {
          handlers: ['./inv.mjs'],
          sagas: [
            {
              id: 'order',
              path: '/order',
              methods: ['POST'],
              steps: [
                { id: 'start', type: 'start', links: [{ to: 'reserve' }] },
                {
                  id: 'reserve',
                  type: 'event',
                  eventMeta: { handler: 'inv', action: 'Reserve', version: 0, outputElement: '$.reservation' },
                  compensate: { eventMeta: { handler: 'inv', action: 'Release', version: 0 } },
                  links: [{ to: 'charge', when: ['SUCCESS'] }],
                },
                {
                  id: 'charge',
                  type: 'event',
                  eventMeta: { handler: 'inv', action: 'Refuse', version: 0 },
                  links: [{ to: 'done', when: ['SUCCESS'] }],
                },
                { id: 'done', type: 'success' },
              ],
            },
          ],
        },
      },
    } as never,
    { files: { 'inv.mjs': INVENTORY } },
  );
  gw = await createGateway({ settings: h.settings, service: h.host, log: silentLogger() });
});
after(async () => {
  await gw?.close();
  await h?.close();
});

test('the step and undo keys of a run start with the X-Request-Id; the problem says the undo completed', async () => {
  const r = await gw.app.inject({ method: 'POST', url: '/api/request/order', payload: {} });
  const id = String(r.headers['x-request-id']);
  assert.equal(r.statusCode, 402);
  const problem = r.json();
  assert.equal(problem.code, 'UNHANDLED_STEP_FAILURE');
  assert.equal(problem.requestId, id);
  assert.equal(problem.compensation, 'COMPLETED');
  assert.deepEqual((globalThis as { __undoKeys?: string[] }).__undoKeys, [`${id}:reserve:undo`]);
});
