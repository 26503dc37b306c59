import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import { silentLogger } from '../../src/core/logger.js';
import { createGateway, type Gateway } from '../../src/gateway/server.js';
import { loadTestHost, type TestHost } from '../../src/testing/index.js';
import { sagaway } from '../cli/spawn.js';

/**
 * examples/order-saga as its README shows it: reserve stock, charge a card at the payment
 * service (payments.mjs, a real process on a free loopback port), ship. A declined card or a
 * missing address undoes what was done (stock released, charge refunded), says so in the
 * problem, and records the failure through the onFail saga.
 */

const CONFIG = 'examples/order-saga/sagaway.yaml';
const GOOD = '4242-4242-4242-4242';
const DECLINED = '4000-0000-0000-0002';
const address = { street: '1 Main St', city: 'Springfield' };

interface Payments {
  origin: string;
  seen: string[];
  child: ChildProcess;
}

async function startPayments(): Promise<Payments> {
  const child = spawn(process.execPath, ['examples/order-saga/payments.mjs', '--port', '0'], {
    env: { PATH: process.env['PATH'] ?? '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const seen: string[] = [];
  const lines = createInterface({ input: child.stdout! });
  const origin = await new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('payments did not start')), 5000);
    child.once('exit', (code) => reject(new Error(`payments exited with ${code}`)));
    lines.on('line', (line) => {
      const m = /^listening (http:\/\/127\.0\.0\.1:\d+)$/.exec(line);
      if (m) {
        clearTimeout(t);
        resolve(m[1] as string);
      } else seen.push(line);
    });
  });
  return { origin, seen, child };
}

describe('examples/order-saga', () => {
  let pay: Payments;
  let h: TestHost;
  let gw: Gateway;
  const post = (body: unknown) =>
    gw.app.inject({ method: 'POST', url: '/api/request/orders', payload: body as Record<string, unknown> });
  const stock = async (sku: string) =>
    (await gw.app.inject({ url: `/api/request/stock/${sku}` })).json() as { available: number };
  const charge = async (id: string) => (await fetch(`${pay.origin}/v1/charges/${id}`)).json();

  before(async () => {
    pay = await startPayments();
    h = await loadTestHost(CONFIG, { env: { PAYMENTS_URL: pay.origin } });
    gw = await createGateway({ settings: h.settings, service: h.host, log: silentLogger() });
  });
  after(async () => {
    await gw?.close();
    await h?.close();
    if (pay && pay.child.exitCode === null) {
      const exited = new Promise((r) => pay.child.once('exit', r));
      pay.child.kill('SIGTERM');
      await exited;
    }
  });

  test('an order that goes through: stock taken, card charged, shipment created', async () => {
    const r = await post({ order: { sku: 'lamp', qty: 2 }, payment: { card: GOOD, amount: 30 }, address });
    assert.equal(r.statusCode, 201, r.body);
    const body = r.json();
    assert.deepEqual(body.reservation, { sku: 'lamp', qty: 2 });
    assert.equal(body.charge.status, 'captured');
    assert.deepEqual(body.shipment.data, address);
    assert.equal((await stock('lamp')).available, 3);
  });

  test('a declined card: the stock is released, the problem says COMPLETED, onFail records the failure', async () => {
    const r = await post({ order: { sku: 'lamp', qty: 1 }, payment: { card: DECLINED, amount: 15 }, address });
    assert.equal(r.statusCode, 402);
    const problem = r.json();
    assert.equal(problem.code, 'PAYMENT_DECLINED');
    assert.equal(problem.compensation, 'COMPLETED');
    assert.equal((await stock('lamp')).available, 3, 'the reservation was undone');
    // onFail runs detached from the response: wait for its record
    let failures: { id: string; data: Record<string, unknown> }[] = [];
    for (let i = 0; i < 100 && failures.length === 0; i++) {
      failures = (await gw.app.inject({ url: '/api/request/orders/failures' })).json().list;
      if (failures.length === 0) await new Promise((res) => setTimeout(res, 20));
    }
    assert.equal(failures[0]?.id, r.headers['x-request-id'], 'keyed by the failed run (its X-Request-Id)');
    assert.deepEqual(failures[0]?.data, {
      sku: 'lamp',
      code: 'PAYMENT_DECLINED',
      compensation: 'COMPLETED',
    });
  });

  test('no address: shipping fails, the charge is refunded and the stock released', async () => {
    const refundsBefore = pay.seen.filter((l) => l.startsWith('POST /v1/refunds')).length;
    const r = await post({ order: { sku: 'chair', qty: 2 }, payment: { card: GOOD, amount: 80 } });
    assert.equal(r.statusCode, 400);
    assert.equal(r.json().code, 'NOT_SHIPPED');
    assert.equal(r.json().compensation, 'COMPLETED');
    assert.equal((await stock('chair')).available, 2);
    // the access line arrives after the answer
    for (let i = 0; i < 100 && pay.seen.filter((l) => l.startsWith('POST /v1/refunds')).length === refundsBefore; i++)
      await new Promise((res) => setTimeout(res, 20));
    assert.equal(pay.seen.filter((l) => l === 'POST /v1/refunds 200').length, refundsBefore + 1);
    // the charge made by this order (the last one) is refunded
    const last = pay.seen.filter((l) => l === 'POST /v1/charges 201').length;
    assert.equal(((await charge(`ch_${last}`)) as { status: string }).status, 'refunded');
  });

  test('out of stock: nothing was done, nothing to undo (no compensation member)', async () => {
    const r = await post({ order: { sku: 'chair', qty: 9 }, payment: { card: GOOD, amount: 9 }, address });
    assert.equal(r.statusCode, 409);
    assert.equal(r.json().code, 'OUT_OF_STOCK');
    assert.equal('compensation' in r.json(), false);
  });

  test('`sagaway run` prints the undone order as the README shows it', () => {
    const body = JSON.stringify({ order: { sku: 'lamp', qty: 1 }, payment: { card: DECLINED, amount: 15 }, address });
    const r = sagaway(['run', '--config', CONFIG, '-X', 'POST', '-d', body, '/orders'], {
      PAYMENTS_URL: pay.origin,
    });
    assert.equal(r.status, 1, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), {
      outcome: 'FAIL',
      http: 402,
      error: { code: 'PAYMENT_DECLINED', message: 'the card was declined', http: 402, compensation: 'COMPLETED' },
    });
    // the unwind is in the logs: the undo of `reserve`, then the summary
    const logs = r.stderr.split('\n').filter((l) => l.startsWith('{'));
    const msgs = logs.map((l) => (JSON.parse(l) as { msg: string }).msg);
    assert.ok(msgs.includes('compensation done'), msgs.join('\n'));
    assert.ok(msgs.includes('saga compensations ended'));
  });
});
