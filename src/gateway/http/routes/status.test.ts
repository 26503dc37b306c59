import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, test } from 'node:test';
import { SagawayError } from '../../../core/errors.js';
import { silentLogger } from '../../../core/logger.js';
import { createState } from '../../../states/index.js';
import { Journal } from '../../../runner/orchestrator/journal.js';
import { JournalReader } from '../../../runner/orchestrator/journal-reader.js';
import type { State } from '../../../states/state.js';
import { gatewaySettingsForTest } from '../../../../test/gateway/settings-for-test.js';
import { settingsFor } from '../../../testing/settings.js';
import { createGateway, type Gateway } from '../../server.js';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
let gw: Gateway;
let state: State;
let down = false;

before(async () => {
  state = createState({ type: 'memory', alias: 'jr', queries: {} }, silentLogger());
  await state.init();
  const journal = new Journal(state, 'main', '1', 'me', silentLogger());
  const ctx = {
    request: { method: 'GET', path: '/x', id: 'req-1', query: {} },
    user: { sub: 'apikey:alice', roles: [], claims: {}, anonymous: false, kind: 'apikey' as const },
  };
  const entry = await journal.begin('s', 'run', {}, ctx, 'key:alice', 'mine');
  await journal.finish(entry, {
    outcome: 'FAIL',
    http: 409,
    error: { code: 'RECORD_EXISTS', message: 'taken', http: 409 },
  });
  // an anonymous caller's run (inject's address is 127.0.0.1), with a guessable correlation id
  const anonCtx = {
    request: { method: 'POST', path: '/x', id: 'anon-run-1', query: {} },
    user: { sub: 'anonymous', roles: [], claims: {}, anonymous: true },
  };
  const anonEntry = await journal.begin('s', 'run', {}, anonCtx, 'anon:127.0.0.1', 'order-42');
  await journal.finish(anonEntry, { outcome: 'SUCCESS', http: 200, response: { paid: true } });
  const reader = new JournalReader([state]);
  const settings = settingsFor(
    {},
    {
      gateway: gatewaySettingsForTest({
        auth: {
          apiKeys: [
            { name: 'alice', sha256: sha('a'), roles: [] },
            { name: 'bob', sha256: sha('b'), roles: [] },
          ],
        },
      }),
    },
  );
  gw = await createGateway({
    settings,
    log: silentLogger(),
    service: {
      run: async () => ({ outcome: 'FAIL', http: 503, error: { code: 'RUNNER_UNAVAILABLE', message: 'x', http: 503 } }),
    },
    status: {
      lookup: (sub, rid, options) => {
        if (down) return Promise.reject(new SagawayError('STATE_UNAVAILABLE', 'db down'));
        return reader.lookup(sub, rid, options);
      },
    },
  });
});
after(() => gw.close());

const get = (url: string, key?: string) =>
  gw.app.inject({ method: 'GET', url, headers: key ? { 'x-api-key': key } : {} });

test('the caller reads its outcome', async () => {
  const r = await get('/api/status/req-1', 'a');
  assert.equal(r.statusCode, 200);
  const body = r.json() as Record<string, unknown>;
  assert.equal(body['status'], 'DONE');
  assert.equal(body['outcome'], 'FAIL');
  assert.equal(body['http'], 409);
  assert.deepEqual(body['error'], { code: 'RECORD_EXISTS', message: 'taken', http: 409 });
  assert.equal(r.headers['cache-control'], 'no-store');
});

test('the caller reads it by its own correlation id too', async () => {
  const r = await get('/api/status/mine', 'a');
  assert.equal(r.statusCode, 200);
  assert.equal(r.json().requestId, 'req-1');
  assert.equal(r.json().correlationId, 'mine');
  assert.equal((await get('/api/status/mine', 'b')).statusCode, 404);
  assert.equal((await get('/api/status/mine')).statusCode, 404);
});

test('anonymous: found by the run id the gateway made, never by the correlation id the client chose', async () => {
  const byRun = await get('/api/status/anon-run-1');
  assert.equal(byRun.statusCode, 200);
  assert.deepEqual(byRun.json().response, { paid: true });
  // a neighbour behind the same NAT (the same address) guessing "order-42" learns nothing
  const byCorrelation = await get('/api/status/order-42');
  assert.equal(byCorrelation.statusCode, 404);
  assert.equal(byCorrelation.json().code, 'NOT_FOUND');
  // another address is another scope even with the run id
  const elsewhere = await gw.app.inject({ url: '/api/status/anon-run-1', remoteAddress: '10.9.9.9' });
  assert.equal(elsewhere.statusCode, 404);
});

test('another caller, anonymous, an unknown or malformed id: the same 404; a bad key: 401', async () => {
  for (const [url, key] of [
    ['/api/status/req-1', 'b'],
    ['/api/status/req-1', undefined],
    ['/api/status/req-2', 'a'],
    ['/api/status/%3Cscript%3E', 'a'],
  ] as const) {
    const r = await get(url, key);
    assert.equal(r.statusCode, 404, url);
    assert.equal((r.json() as { code: string }).code, 'NOT_FOUND');
  }
  assert.equal((await get('/api/status/req-1', 'nope')).statusCode, 401);
});

test('journal down: 503 with Retry-After; every other 503 gets Retry-After too', async () => {
  down = true;
  try {
    const r = await get('/api/status/req-1', 'a');
    assert.equal(r.statusCode, 503);
    assert.equal(r.headers['retry-after'], '1');
  } finally {
    down = false;
  }
  const saga = await get('/api/request/anything', 'a');
  assert.equal(saga.statusCode, 503);
  assert.equal(saga.headers['retry-after'], '1');
});
