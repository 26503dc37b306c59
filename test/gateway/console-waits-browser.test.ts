import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { silentLogger } from '../../src/core/logger.js';
import { createGateway } from '../../src/gateway/server.js';
import { loadTestHost } from '../../src/testing/index.js';
import { CLI } from '../cli/spawn.js';
import { CHROMIUM, needsChromium } from './chromium.js';

/**
 * Waiting runs in the console (issue 21 item 5), in Chromium against examples/approval served on
 * a loopback socket: a parked expense shows in the journal list with what it waits for; its
 * Approve button sends Try it's credential to the gateway's signal route (refused without one,
 * refused for the expense's own submitter), and a manager's approval resumes the run, which then
 * waits for the payment, whose Signal button sends the body typed and ends it; Reject ends another.
 */

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'];
const CONFIG = 'examples/approval/sagaway.yaml';

function token(sub: string, roles: string): string {
  const { JWT_SECRET: _unset, ...env } = process.env; // the example's development secret
  const r = spawnSync(process.execPath, [CLI, 'token', '--config', CONFIG, '--sub', sub, '--roles', roles], {
    encoding: 'utf8',
    env,
  });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim();
}

/** Press a waiting run's button; the gateway's answer as the page shows it. */
async function press(page: Page, runId: string, action: string, auth: string): Promise<string> {
  await page.fill('#try-auth', auth);
  await page.$eval('#wait-status', (e) => e.removeAttribute('data-status'));
  await page.click(`tr[data-journal-run="${runId}"] button[data-action="${action}"]`);
  await page.waitForSelector('#wait-status[data-status]');
  return String(await page.getAttribute('#wait-status', 'data-status'));
}

test(
  'Chromium: a waiting run listed with its wait; Approve and Signal resume it, Reject ends it',
  { skip: needsChromium() },
  async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sagaway-waits-console-'));
    const profile = await mkdtemp(join(tmpdir(), 'sagaway-chromium-'));
    const alice = token('alice', 'employee');
    const bob = token('bob', 'employee,manager');
    const bank = token('bank', 'payments');
    const host = await loadTestHost(CONFIG, { env: { APPROVAL_DB: join(dir, 'journal.db') } });
    const gateway = await createGateway({
      settings: host.settings,
      service: host.host,
      log: silentLogger(),
      status: host.host.statusReader(),
      waits: host.host.waits.signals(),
      traces: [host.host.traces],
    });
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      args: ARGS,
      headless: true,
    });
    try {
      const { port } = await gateway.listen(0, '127.0.0.1');
      const base = `http://127.0.0.1:${port}`;
      const submitted = await fetch(`${base}/api/request/expenses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json' },
        body: JSON.stringify({ id: 'e-9', amount: 900, description: 'conference' }),
      });
      assert.equal(submitted.status, 202);
      const runId = String(((await submitted.json()) as { runId: string }).runId);

      const page = context.pages()[0] ?? (await context.newPage());
      await page.goto(`${base}/console`);
      await page.waitForSelector('body[data-ready="true"]');
      const row = `tr[data-journal-run="${runId}"][data-status="WAITING"]`;
      await page.waitForSelector(row);
      assert.match(
        String(await page.textContent(`${row} .waiting-on`)),
        /^approval: approval "approval" · roles manager · until /,
      );
      const buttons = await page.$$eval(`${row} button`, (bs) => bs.map((b) => b.getAttribute('data-action')));
      assert.deepEqual(buttons, ['approve', 'reject', 'cancel']);

      // the gateway decides who may: no credential, then the submitter herself
      assert.equal(await press(page, runId, 'approve', ''), '401');
      assert.equal(await press(page, runId, 'approve', `Bearer ${alice}`), '403');
      assert.match(String(await page.textContent('#wait-status')), /SELF_APPROVAL|FORBIDDEN/);
      assert.equal(await press(page, runId, 'approve', `Bearer ${bob}`), '202');

      // resumed at once: the run now waits for the payment by its key, with a Signal button
      await page.waitForSelector(`${row} .waiting-on:text-matches("^paid: signal \\"payment\\" \\\\(key e-9\\\\)")`, {
        timeout: 15_000,
      });
      await page.fill('#wait-body', '{"status":"settled","reference":"pay-9"}');
      // a signal by run follows the API entry's rules: the bank holds no `employee` role
      assert.equal(await press(page, runId, 'signal', `Bearer ${bank}`), '403');
      const payer = token('payer', 'employee,payments');
      assert.equal(await press(page, runId, 'signal', `Bearer ${payer}`), '202');
      await page.waitForSelector(`tr[data-journal-run="${runId}"][data-status="DONE"] .outcome-SUCCESS`, {
        timeout: 15_000,
      });
      assert.equal(await page.$(`tr[data-journal-run="${runId}"] button`), null, 'an ended run has no buttons');

      // a second expense: a manager's Reject ends it FAIL (EXPENSE_REJECTED)
      const other = await fetch(`${base}/api/request/expenses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json' },
        body: JSON.stringify({ id: 'e-10', amount: 500 }),
      });
      const otherId = String(((await other.json()) as { runId: string }).runId);
      await page.reload();
      await page.waitForSelector(`tr[data-journal-run="${otherId}"][data-status="WAITING"]`);
      assert.equal(await press(page, otherId, 'reject', `Bearer ${bob}`), '202');
      assert.match(String(await page.textContent('#wait-status')), /"status":\s*"REJECTED"/);
      await page.waitForSelector(`tr[data-journal-run="${otherId}"][data-status="DONE"] .outcome-FAIL`, {
        timeout: 15_000,
      });
      assert.ok(!(await page.content()).includes(bob), 'the credential typed is not written into the page');
    } finally {
      await context.close();
      await gateway.close();
      await host.close();
      await rm(dir, { recursive: true, force: true });
      await rm(profile, { recursive: true, force: true });
    }
  },
);
