import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import { pino } from 'pino';
import type { Settings } from '../../src/config/settings.js';
import { createGateway, type Gateway } from '../../src/gateway/server.js';
import { startTestHost, type TestHost } from '../../src/testing/index.js';

/**
 * outputSchema (issue 28): the gateway checks answers only with gateway.validateResponses: true,
 * then a mismatch is 500 INVALID_OUTPUT naming the saga, never the data, and one log line with
 * the pointer; the test kit answers the same way.
 */

const SECRET_ISH = 'zq7-response-data';
const CONFIG = `
gateway:
  limits: { rate: false }
  apis: [{ path: /, runner: r, public: true }]
runners:
  r:
    sagas:
      - id: price
        path: /price
        outputSchema:
          type: object
          required: [amount]
          properties: { amount: { type: number }, currency: { type: string, enum: [EUR, USD] } }
        steps:
          - { id: start, type: start, links: [{ to: shape }] }
          - { id: shape, type: transform, expression: '{ "amount": $contains(parameters.amount, /^[0-9]+$/) ? $number(parameters.amount) : parameters.amount, "currency": parameters.currency, "note": "${SECRET_ISH}" }', links: [{ to: done }] }
          - { id: done, type: success }
`;

let h: TestHost;
const lines: Record<string, unknown>[] = [];
const gateways: Gateway[] = [];

async function gateway(validateResponses: boolean): Promise<Gateway> {
  const settings: Settings = { ...h.settings, gateway: { ...h.settings.gateway, validateResponses } };
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n'))
        if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const gw = await createGateway({ settings, service: h.host, log: pino({ level: 'info' }, sink) });
  gateways.push(gw);
  return gw;
}

before(async () => {
  h = await startTestHost(CONFIG);
});
after(async () => {
  for (const gw of gateways) await gw.close();
  await h.close();
});

test('validateResponses: a mismatch is 500 INVALID_OUTPUT naming the saga, not the data; the log has the pointer', async () => {
  const gw = await gateway(true);
  const bad = await gw.app.inject({ method: 'GET', url: '/api/request/price?amount=x&currency=GBP' });
  assert.equal(bad.statusCode, 500);
  const problem = bad.json<{ code: string; detail: string }>();
  assert.equal(problem.code, 'INVALID_OUTPUT');
  assert.match(problem.detail, /saga "price"/);
  assert.ok(!bad.body.includes(SECRET_ISH) && !bad.body.includes('GBP'), 'no data in the answer');
  const logged = lines.find((l) => l['msg'] === 'the response does not match the outputSchema');
  assert.ok(logged, 'one log line');
  assert.equal(logged['saga'], 'price');
  assert.deepEqual(
    (logged['failures'] as { pointer: string }[]).map((f) => f.pointer),
    ['/amount', '/currency'],
  );
  assert.ok(!JSON.stringify(logged).includes(SECRET_ISH), 'the log line has pointers, not the data');
  const good = await gw.app.inject({ method: 'GET', url: '/api/request/price?amount=12&currency=EUR' });
  assert.equal(good.statusCode, 200, good.body);
});

test('without validateResponses the answer goes out unchecked', async () => {
  const gw = await gateway(false);
  const res = await gw.app.inject({ method: 'GET', url: '/api/request/price?amount=x' });
  assert.equal(res.statusCode, 200);
  assert.equal(res.json<{ amount: string }>().amount, 'x');
});

test('the test kit checks outputSchema: FAIL 500 INVALID_OUTPUT listing the pointers', async () => {
  const bad = await h.run('/price', { query: { amount: 'x' }, input: { amount: 'x' } });
  assert.equal(bad.outcome, 'FAIL');
  assert.equal(bad.http, 500);
  assert.equal(bad.error?.code, 'INVALID_OUTPUT');
  assert.match(bad.error!.message, /saga "price".*\/amount must be number/);
  const good = await h.run('/price', { input: { amount: '3' } });
  assert.equal(good.outcome, 'SUCCESS');
});
