import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import { pino } from 'pino';
import { createGateway, type Gateway } from '../../src/gateway/server.js';
import { loadTestHost, type TestHost } from '../../src/testing/index.js';
import { spawnSync } from 'node:child_process';
import { CLI } from '../cli/spawn.js';

/**
 * examples/approval served for real, as its README drives it: the example's own file and handler,
 * its SQLite journal, tokens from `sagaway token`, the gateway on a loopback socket, fetch. The
 * waits' clock is one the test moves, so the 72 h timeout takes milliseconds.
 */

const CONFIG = 'examples/approval/sagaway.yaml';
const dir = mkdtempSync(join(tmpdir(), 'sagaway-approval-'));
const logs: Record<string, unknown>[] = [];
let now = Date.now();
let host: TestHost;
let gateway: Gateway;
let base = '';
const tokens: Record<'alice' | 'bob' | 'bank', string> = { alice: '', bob: '', bank: '' };

function token(sub: string, roles: string): string {
  const { JWT_SECRET: _unset, ...env } = process.env; // the file's development secret, as the README runs it
  const r = spawnSync(process.execPath, [CLI, 'token', '--config', CONFIG, '--sub', sub, '--roles', roles], {
    encoding: 'utf8',
    env,
  });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim();
}

before(async () => {
  // as the README: tokens signed by the file's development secret
  tokens.alice = token('alice', 'employee');
  tokens.bob = token('bob', 'employee,manager');
  tokens.bank = token('bank', 'payments');
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logs.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  host = await loadTestHost(CONFIG, {
    env: { APPROVAL_DB: join(dir, 'journal.db') },
    clock: { now: () => now },
    log: pino({ level: 'info' }, sink),
  });
  gateway = await createGateway({
    settings: host.settings,
    service: host.host,
    log: pino({ level: 'silent' }),
    status: host.host.statusReader(),
    waits: host.host.waits.signals(),
  });
  const { port } = await gateway.listen(0, '127.0.0.1');
  base = `http://127.0.0.1:${port}`;
});
after(async () => {
  await gateway?.close();
  await host?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function post(path: string, who: keyof typeof tokens | undefined, body?: unknown) {
  const res = await fetch(base + path, {
    method: 'POST',
    headers: {
      ...(who ? { authorization: `Bearer ${tokens[who]}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

async function status(runId: string) {
  const res = await fetch(`${base}/api/status/${runId}`, { headers: { authorization: `Bearer ${tokens.alice}` } });
  return (await res.json()) as {
    status: string;
    outcome?: string;
    response?: Record<string, unknown>;
    error?: { code: string };
    waitingOn?: { step: string; signal?: string; key?: string };
  };
}

/** Submit an expense over the threshold: 202 WAITING on the approval; its run id. */
async function submit(id: string, amount = 400): Promise<string> {
  const res = await post('/api/request/expenses', 'alice', { id, amount, description: 'flight' });
  assert.equal(res.status, 202);
  assert.equal(res.body['status'], 'WAITING');
  assert.deepEqual((res.body['waitingOn'] as { step: string }).step, 'approval');
  return String(res.body['runId']);
}

/** The links the notify event logged for that expense, as a manager would get them (absolute). */
function linksOf(id: string): { approve: string; reject: string } {
  const line = logs.find((l) => l['expense'] === id && typeof l['approve'] === 'string');
  assert.ok(line, `no approval link logged for ${id}`);
  const path = (u: unknown) => new URL(String(u)).pathname + new URL(String(u)).search;
  assert.match(String(line['approve']), /^http:\/\/localhost:8080\/api\/callbacks\/[\w-]+\.[\w-]+$/);
  return { approve: path(line['approve']), reject: path(line['reject']) };
}

const withdrawn = (id: string) => logs.some((l) => l['expense'] === id && l['msg'] === 'expense withdrawn');

test('under the threshold: 201 at once, nothing waits', async () => {
  const res = await post('/api/request/expenses', 'alice', { id: 'e-1', amount: 40, description: 'taxi' });
  assert.equal(res.status, 201);
  assert.deepEqual(res.body, { expense: { id: 'e-1', amount: 40, submittedBy: 'alice' } });
  assert.equal((await host.host.waits.stats()).parked, 0);
});

test('over it: WAITING; approved by the link, then paid by the webhook with the expense id as key', async () => {
  const runId = await submit('e-2');
  assert.equal((await status(runId)).waitingOn?.step, 'approval');
  // the submitter may not approve her own expense, nor may a non-manager
  assert.equal((await post(`/api/runs/${runId}/signals/approval`, 'alice', {})).status, 403);
  const page = await fetch(base + linksOf('e-2').approve);
  assert.equal(page.status, 200);
  assert.match(await page.text(), /<form method="post"/);

  const approved = await post(linksOf('e-2').approve, undefined);
  assert.equal(approved.status, 202);
  assert.equal(approved.body['status'], 'SIGNAL');
  await host.host.waits.poll();
  const paying = await status(runId);
  assert.equal(paying.status, 'WAITING');
  assert.deepEqual([paying.waitingOn?.step, paying.waitingOn?.key], ['paid', 'e-2']);

  // the provider holds only `payments`, not the API entry's `employee`: the wait's roles decide
  const webhook = { key: 'e-2', data: { status: 'settled', reference: 'pay-991' }, messageId: 'evt-991' };
  assert.equal((await post('/api/signals/payment', 'alice', webhook)).status, 403);
  const paid = await post('/api/signals/payment', 'bank', webhook);
  assert.equal(paid.status, 202);
  assert.deepEqual(paid.body, { messageId: 'evt-991', status: 'APPLIED', duplicate: false, runId });
  const again = await post('/api/signals/payment', 'bank', webhook);
  assert.equal(again.status, 200);
  assert.equal(again.body['duplicate'], true);
  await host.host.waits.poll();
  const done = await status(runId);
  assert.equal(done.outcome, 'SUCCESS');
  assert.deepEqual(done.response?.['payment'], { status: 'settled', reference: 'pay-991' });
  assert.equal((done.response?.['approval'] as { decision: string }).decision, 'approve');
  assert.ok(!withdrawn('e-2'));
});

test('a manager approves by run id; a failed payment ends PAYMENT_FAILED, withdrawn', async () => {
  const runId = await submit('e-3');
  assert.equal((await post(`/api/runs/${runId}/signals/approval`, 'bob', { comment: 'fine' })).status, 202);
  await host.host.waits.poll();
  const failed = await post('/api/signals/payment', 'bank', { key: 'e-3', data: { status: 'failed' } });
  assert.equal(failed.status, 202);
  await host.host.waits.poll();
  const s = await status(runId);
  assert.equal(s.error?.code, 'PAYMENT_FAILED');
  assert.ok(withdrawn('e-3'));
});

test('rejected by the link: EXPENSE_REJECTED and the compensation', async () => {
  const runId = await submit('e-4');
  const rejected = await post(linksOf('e-4').reject, undefined);
  assert.equal(rejected.status, 202);
  assert.equal(rejected.body['status'], 'REJECTED');
  await host.host.waits.poll();
  const s = await status(runId);
  assert.equal(s.outcome, 'FAIL');
  assert.equal(s.error?.code, 'EXPENSE_REJECTED');
  assert.ok(withdrawn('e-4'));
});

test('no decision for 72 h: EXPENSE_EXPIRED and the compensation; the link has expired', async () => {
  const runId = await submit('e-5');
  now += 72 * 3600_000 - 1000;
  // poll() waits for any poll in progress (the host's own, every second) and polls once more
  await host.host.waits.poll();
  assert.equal((await status(runId)).status, 'WAITING', 'not due before 72 h');
  now += 1000;
  assert.equal((await post(linksOf('e-5').approve, undefined)).body['code'], 'CALLBACK_EXPIRED');
  await host.host.waits.poll();
  const s = await status(runId);
  assert.equal(s.error?.code, 'EXPENSE_EXPIRED');
  assert.ok(withdrawn('e-5'));
});
