import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import type { Principal } from '../../src/core/types.js';
import { loadTestHost, testClock, type TestHost } from '../../src/testing/index.js';
import { sagaway } from '../cli/spawn.js';

/**
 * The approval example's 72 h timeout reaching its compensation in milliseconds (issue 21, item
 * 5): through the test kit's clock (`testClock`, `TestHost.advance`) and through
 * `sagaway run --advance`, with the example's own file and handler.
 */

const CONFIG = 'examples/approval/sagaway.yaml';
const alice: Principal = { sub: 'alice', roles: ['employee'], claims: { sub: 'alice' }, anonymous: false };
const expense = (id: string) => ({ id, amount: 400, description: 'flight' });

describe('the test kit moves the waits clock', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sagaway-approval-clock-'));
  const clock = testClock('2026-01-01T00:00:00Z');
  const logs: Record<string, unknown>[] = [];
  let t: TestHost;
  before(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        logs.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
        done();
      },
    });
    t = await loadTestHost(CONFIG, {
      env: { APPROVAL_DB: join(dir, 'journal.db') },
      clock,
      log: pino({ level: 'info' }, sink),
    });
  });
  after(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('72 h without a decision: EXPENSE_EXPIRED and the withdrawal, in milliseconds', async () => {
    const started = Date.now();
    const parked = await t.run('/expenses', { method: 'POST', input: expense('c-1'), user: alice });
    assert.equal(parked.outcome, 'WAITING');
    const runId = (parked.response as { runId: string }).runId;
    const waiting = await t.status(runId, alice);
    assert.equal(waiting?.status, 'WAITING');
    // the due time is the test clock's, not the real one
    assert.equal((waiting as { waitingOn?: { until?: string } }).waitingOn?.until, '2026-01-04T00:00:00.000Z');

    const { ended } = await t.advance('72h');
    const result = ended.get(runId);
    assert.ok(result, 'the run ended at 72 h');
    assert.equal(result.outcome, 'FAIL');
    assert.equal(result.error?.code, 'EXPENSE_EXPIRED');
    assert.equal(result.error?.compensation, 'COMPLETED');
    assert.ok(logs.some((l) => l['expense'] === 'c-1' && l['msg'] === 'expense withdrawn'));
    assert.equal((await t.status(runId, alice))?.status, 'DONE');
    assert.ok(Date.now() - started < 10_000, 'no real time waited');
  });

  test('71 h 59 min is not due; the last minute is', async () => {
    const parked = await t.run('/expenses', { method: 'POST', input: expense('c-2'), user: alice });
    const runId = (parked.response as { runId: string }).runId;
    const before = await t.advance('71h');
    assert.equal(before.resumed, 0);
    assert.equal(before.ended.size, 0);
    assert.equal((await t.advance('59m')).ended.size, 0);
    assert.equal((await t.status(runId, alice))?.status, 'WAITING');
    const { resumed, ended } = await t.advance('1m');
    assert.equal(resumed, 1);
    assert.equal(ended.get(runId)?.error?.code, 'EXPENSE_EXPIRED');
  });

  test('advance needs a test clock', async () => {
    const real = await loadTestHost(CONFIG, { env: { APPROVAL_DB: join(dir, 'real.db') } });
    try {
      await assert.rejects(real.advance('1h'), /testClock/);
    } finally {
      await real.close();
    }
  });
});

/** The rows of the example's configured journal (0 when the file or table is not there). */
function journaled(file: string): number {
  if (!existsSync(file)) return 0;
  const db = new Database(file, { readonly: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[];
    return tables.reduce(
      (n, t) => n + (db.prepare(`SELECT count(*) AS c FROM "${t.name}"`).get() as { c: number }).c,
      0,
    );
  } finally {
    db.close();
  }
}

describe('sagaway run --advance', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sagaway-approval-run-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const env = { APPROVAL_DB: join(dir, 'configured.db'), TMPDIR: dir };
  const run = (...args: string[]) =>
    sagaway(
      ['run', '--config', CONFIG, '-X', 'POST', '-d', JSON.stringify(expense('r-1')), '--user', 'alice'].concat([
        '--roles',
        'employee',
        ...args,
        '/expenses',
      ]),
      env,
    );

  test('72 h: EXPENSE_EXPIRED after the compensation, exit 1, nothing left behind', () => {
    const started = Date.now();
    const r = run('--advance', '72h');
    assert.equal(r.status, 1, r.stderr);
    const out = JSON.parse(r.stdout) as {
      outcome: string;
      http: number;
      error: { code: string; compensation?: string };
    };
    assert.deepEqual(
      [out.outcome, out.http, out.error.code, out.error.compensation],
      ['FAIL', 504, 'EXPENSE_EXPIRED', 'COMPLETED'],
    );
    assert.match(r.stderr, /expense withdrawn/);
    assert.ok(Date.now() - started < 20_000);
    // the temporary journal is gone; the configured journal holds no run of the command
    assert.deepEqual(
      readdirSync(dir).filter((f) => f.startsWith('sagaway-run-')),
      [],
    );
    assert.equal(journaled(join(dir, 'configured.db')), 0);
  });

  test('not far enough: WAITING with what it waits on (the clock given by --clock)', () => {
    const r = run('--clock', '2026-01-01T00:00:00Z', '--advance', '71h', '--advance', '59m');
    assert.equal(r.status, 1, r.stderr);
    const out = JSON.parse(r.stdout) as {
      outcome: string;
      http: number;
      response: { waitingOn: { step: string; until: string } };
    };
    assert.deepEqual([out.outcome, out.http], ['WAITING', 202]);
    assert.deepEqual(out.response.waitingOn.step, 'approval');
    assert.equal(out.response.waitingOn.until, '2026-01-04T00:00:00.000Z');
    assert.doesNotMatch(r.stderr, /expense withdrawn/);
  });

  test('a bad --advance or --clock is a usage error', () => {
    const bad = run('--advance', 'soon');
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--advance needs a positive duration/);
    const clock = run('--clock', 'yesterday');
    assert.equal(clock.status, 2);
    assert.match(clock.stderr, /--clock needs/);
  });
});
