import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';

/** The commands the docs show for each example, and what they must print. */
const CLI = join('dist', 'src', 'cli', 'main.js');
const dataDir = mkdtempSync(join(tmpdir(), 'sagaway-examples-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));

function run(config: string, ...args: string[]) {
  const r = spawnSync(process.execPath, [CLI, 'run', '--config', config, ...args], {
    encoding: 'utf8',
    env: { ...process.env, TODO_DB: join(dataDir, 'todos.db') },
  });
  assert.ok(r.stdout.trim(), r.stderr);
  return { status: r.status, out: JSON.parse(r.stdout) };
}

describe('examples run as documented', () => {
  test('event-steps: reserve, out of stock, invalid, ACK', () => {
    const cfg = 'examples/event-steps/sagaway.yaml';
    assert.deepEqual(run(cfg, '-X', 'POST', '-d', '{"order":{"sku":"A1","qty":2}}', '/orders').out, {
      outcome: 'SUCCESS',
      http: 201,
      response: { sku: 'A1', reserved: 2 },
    });
    assert.equal(
      run(cfg, '-X', 'POST', '-d', '{"order":{"sku":"A1","qty":50}}', '/orders').out.error.code,
      'OUT_OF_STOCK',
    );
    const invalid = run(cfg, '-X', 'POST', '-d', '{"order":{"sku":"A1","qty":0}}', '/orders');
    assert.equal(invalid.status, 1);
    assert.deepEqual(invalid.out.error, {
      code: 'VALIDATION_FAILED',
      message: 'qty must be a positive integer',
      http: 400,
    });
    const ack = run(cfg, '-X', 'POST', '-d', '{"order":{"sku":"A1","qty":2}}', '/orders/async');
    assert.equal(ack.status, 0);
    assert.equal(ack.out.http, 202);
    assert.match(ack.out.response.reservation.ticket, /:reserve$/);
  });
  test('inject: variables, values, secrets', () => {
    const r = run(
      'examples/inject/sagaway.yaml',
      '-X',
      'POST',
      '-d',
      '{"customer":{"id":"c-42","tier":"gold"},"qty":3}',
      '/quote',
    );
    assert.deepEqual(r.out.response, {
      domain: 'prices-eu-west',
      parameters: {
        customerId: 'c-42',
        tier: 'gold',
        qty: 3,
        method: 'POST',
        note: 'c-42',
        path_customer: '$.parameters.customer.id',
        authorization: '(set)',
      },
    });
    assert.equal(
      run('examples/inject/sagaway.yaml', '-X', 'POST', '-d', '{"customer":{"id":"c-1"},"qty":1}', '/quote').out
        .response.parameters.tier,
      'standard',
    );
  });
  test('preconfigured-actions: structural action and stream overrides', () => {
    const r = run('examples/preconfigured-actions/sagaway.yaml', '/search?q=lamp');
    assert.deepEqual(r.out.response, {
      query: 'lamp',
      settings: { currency: 'USD', limit: 5, includeHidden: false, region: 'eu' },
      domain: 'products',
    });
  });
  test('preconfigured-actions: an action record filled with %%param_<name>%%', () => {
    const r = run('examples/preconfigured-actions/sagaway.yaml', '/presets/cheap-lamps?q=lamp');
    assert.deepEqual(r.out.response, {
      query: 'lamp',
      settings: { limit: '10', maxPrice: 40, currency: 'EUR' },
      domain: 'products',
    });
  });
  test('todo: create, list, get, validation', () => {
    const cfg = 'examples/todo/sagaway.yaml';
    const created = run(cfg, '-X', 'POST', '-d', '{"title":"buy milk"}', '/todos');
    assert.equal(created.out.http, 201);
    const id = created.out.response.id as string;
    assert.equal(
      run(cfg, '/todos').out.response.list.some((t: { id: string }) => t.id === id),
      true,
    );
    assert.equal(run(cfg, `/todos/${id}`).out.response.data.title, 'buy milk');
    assert.equal(run(cfg, '-X', 'POST', '-d', '{"title":""}', '/todos').out.http, 400);
  });
});
