import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../../src/core/logger.js';
import { createGateway, type Gateway } from '../../src/gateway/server.js';
import { startTestHost, type TestHost } from '../../src/testing/index.js';
import { PROBE_HANDLER } from '../../src/testing/probe-handler.js';

/**
 * Issue 9 item 4: the journal was keyed by the client's X-Request-Id. Two requests with the same
 * id replaced each other's journal record: the first run was aborted ("taken over", 503) after
 * its side effect, and /api/status/<id> showed the second caller's result.
 *
 * Over the real engine: a journaled runner (SQLite journal), a saga whose side effect (a record
 * written to the ledger state) is followed by a slow step and one more event step (whose journal
 * write is where the first run used to find its record replaced), and the gateway in front of
 * it. Run ids are now the gateway's; the client's id is a correlation id in the caller's scope.
 */

const CONFIG = (dir: string) => `
gateway:
  apis:
    - { path: /pay, runner: shop, methods: [POST], public: true }
  auth:
    apiKeys:
      - { name: k1, sha256: "${sha('key-1')}", roles: [] }
states:
  journal: { type: sqlite, file: ${JSON.stringify(join(dir, 'journal.db'))} }
  ledger: { type: memory }
runners:
  shop:
    handlers: [write, ./probe.mjs]
    journal: journal
    sagas:
      - id: pay
        path: /pay
        methods: [POST]
        steps:
          - { id: start, type: start, links: [{ to: effect }] }
          - id: effect
            type: event
            autoFail: true
            eventMeta: { handler: write, action: Create, version: 0, domain: ledger, inputElement: parameters, outputElement: $.entry }
            links: [{ to: slow }]
          - id: slow
            type: event
            autoFail: true
            eventMeta: { handler: probe, action: Slow, version: 0, outputElement: $.slow, parameters: { ms: 300 } }
            links: [{ to: receipt }]
          - id: receipt
            type: event
            autoFail: true
            eventMeta: { handler: probe, action: Const, version: 0, outputElement: $.receipt, parameters: { value: sent } }
            links: [{ to: done }]
          - { id: done, type: success, http: 201, outputElement: entry }
`;

function sha(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

interface Caller {
  name: string;
  address: string;
  key?: string;
}

async function withCluster(fn: (h: TestHost, gw: Gateway) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'sagaway-takeover-'));
  const h = await startTestHost(CONFIG(dir), { files: { 'probe.mjs': PROBE_HANDLER } });
  const gw = await createGateway({
    settings: h.settings,
    service: h.host,
    log: silentLogger(),
    status: h.host.statusReader(),
  });
  try {
    await fn(h, gw);
  } finally {
    await gw.close();
    await h.close();
    await rm(dir, { recursive: true, force: true });
  }
}

function headersOf(c: Caller, requestId?: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    ...(requestId ? { 'x-request-id': requestId } : {}),
    ...(c.key ? { 'x-api-key': c.key } : {}),
  };
}

function pay(gw: Gateway, c: Caller, requestId: string) {
  return gw.app.inject({
    method: 'POST',
    url: '/api/request/pay',
    remoteAddress: c.address,
    headers: headersOf(c, requestId),
    payload: { owner: c.name },
  });
}

function status(gw: Gateway, c: Caller, id: string) {
  return gw.app.inject({ url: `/api/status/${id}`, remoteAddress: c.address, headers: headersOf(c) });
}

async function ledger(h: TestHost): Promise<string[]> {
  const page = await h.host.runners.get('shop')!.handlerEnv().state('ledger').list({ limit: 100 });
  return page.list.map((r) => String(r.data['owner'])).sort();
}

test('same X-Request-Id from different callers: every run completes with one effect, each caller sees only its own', async () => {
  await withCluster(async (h, gw) => {
    const callers: Caller[] = [
      { name: 'anon-a', address: '10.0.0.1' },
      { name: 'anon-b', address: '10.0.0.2' },
      { name: 'key-1', address: '10.0.0.1', key: 'key-1' },
    ];
    const answers = await Promise.all(callers.map((c) => pay(gw, c, 'dup-1')));
    const runIds = answers.map((r) => String(r.headers['x-request-id']));
    assert.deepEqual(
      answers.map((r) => r.statusCode),
      [201, 201, 201],
      `no run is taken over: ${answers.map((r) => r.body).join(' ')}`,
    );
    assert.deepEqual(await ledger(h), ['anon-a', 'anon-b', 'key-1'], 'each side effect applied once');
    answers.forEach((r, i) => {
      assert.equal(r.json().data.owner, callers[i]!.name, 'each caller got its own record');
      assert.equal(r.headers['x-correlation-id'], 'dup-1');
      assert.match(runIds[i]!, /^[0-9a-f-]{36}$/);
    });
    assert.equal(new Set(runIds).size, 3, 'three distinct run ids');

    for (const [i, c] of callers.entries()) {
      // an anonymous caller by its run id only (docs/gateway.md): 'dup-1' is 404 for it
      if (c.key === undefined) assert.equal((await status(gw, c, 'dup-1')).statusCode, 404, `${c.name} dup-1`);
      for (const id of c.key === undefined ? [runIds[i]!] : [runIds[i]!, 'dup-1']) {
        const s = await status(gw, c, id);
        assert.equal(s.statusCode, 200, `${c.name} ${id}`);
        const body = s.json();
        assert.equal(body.status, 'DONE');
        assert.equal(body.outcome, 'SUCCESS');
        assert.equal(body.requestId, runIds[i]);
        assert.equal(body.correlationId, 'dup-1');
        assert.equal(body.response.data.owner, c.name, `${c.name} sees its own result by ${id}`);
      }
      // Nobody else can read this run, by run id or by the shared correlation id.
      for (const other of callers.filter((o) => o !== c)) {
        const s = await status(gw, other, runIds[i]!);
        assert.equal(s.statusCode, 404, `${other.name} cannot read ${c.name}'s run`);
        assert.equal(s.json().code, 'NOT_FOUND');
        assert.doesNotMatch(s.body, new RegExp(c.name));
      }
    }
  });
});

test('same X-Request-Id twice from the same caller: both complete, the second never touches the first', async () => {
  await withCluster(async (h, gw) => {
    const c: Caller = { name: 'key-1', address: '10.0.0.9', key: 'key-1' };
    const first = pay(gw, c, 'again');
    // the first run's effect is done, its slow step in flight
    for (let end = Date.now() + 10_000; (await ledger(h)).length === 0 && Date.now() < end;)
      await new Promise((r) => setTimeout(r, 5));
    assert.deepEqual(await ledger(h), ['key-1']);
    const second = await pay(gw, c, 'again');
    const one = await first;
    assert.equal(one.statusCode, 201, `the first run is not taken over: ${one.body}`);
    assert.equal(second.statusCode, 201, second.body);
    assert.deepEqual(await ledger(h), ['key-1', 'key-1'], 'one effect per run');
    assert.notEqual(one.headers['x-request-id'], second.headers['x-request-id']);
    for (const r of [one, second]) {
      const s = (await status(gw, c, String(r.headers['x-request-id']))).json();
      assert.equal(s.outcome, 'SUCCESS');
      assert.equal(s.response.id, r.json().id, 'a run id shows that run');
    }
    // The correlation id names the first run that carried it.
    const byCorrelation = (await status(gw, c, 'again')).json();
    assert.equal(byCorrelation.requestId, one.headers['x-request-id']);
  });
});
