import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { CHROMIUM, needsChromium } from '../gateway/chromium.js';
import { config, handled, world } from './runs-world.js';

/**
 * The console operates runs (issue 22 item 5), in Chromium on a loopback socket: a suspended run
 * in the journal list has Dry run, Redrive and Abort buttons; the dry run shows the steps that
 * would run again and the one not idempotent; Redrive (after the cause is fixed) ends it
 * SUCCESS and the row shows its attempts; Abort ends another FAIL after its compensation. With
 * `gateway.admin.roles` and no credential, no button shows.
 */

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'];
const SQLITE = 'jr: { type: sqlite, file: ./journal.db }';
const SUSPENDING = config(SQLITE, {
  compensate: true,
  retry: 'retry: { attempts: 1, on: [FLAKY], onExhausted: suspend }',
});

async function suspendedRun(base: string): Promise<string> {
  const res = await fetch(`${base}/api/request/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ order: 'o-1' }),
  });
  assert.equal(res.status, 202);
  await res.arrayBuffer();
  return res.headers.get('x-request-id')!;
}

async function press(page: Page, runId: string, action: string): Promise<string> {
  await page.$eval('#run-status', (e) => e.removeAttribute('data-status'));
  await page.click(`tr[data-journal-run="${runId}"] button[data-action="${action}"]`);
  await page.waitForSelector('#run-status[data-status]');
  return String(await page.getAttribute('#run-status', 'data-status'));
}

test(
  'Chromium: Dry run, Redrive and Abort on journaled runs, for a loopback caller',
  { skip: needsChromium() },
  async (t) => {
    const w = await world(SUSPENDING);
    const profile = await mkdtemp(join(tmpdir(), 'sagaway-chromium-'));
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      args: ARGS,
      headless: true,
    });
    t.after(async () => {
      await context.close();
      await w.close();
      await rm(profile, { recursive: true, force: true });
    });
    const h = handled();
    const first = await suspendedRun(w.base);
    const second = await suspendedRun(w.base);

    const page = context.pages()[0] ?? (await context.newPage());
    await page.goto(`${w.base}/console`);
    await page.waitForSelector('body[data-ready="true"]');
    const row = (id: string, status: string) => `tr[data-journal-run="${id}"][data-status="${status}"]`;
    await page.waitForSelector(`${row(first, 'SUSPENDED')} button[data-action="redrive"]`);
    assert.equal(await page.getAttribute('body', 'data-operate'), 'true');
    assert.deepEqual(
      await page.$$eval(`${row(first, 'SUSPENDED')} td.operate button`, (bs) =>
        bs.map((b) => b.getAttribute('data-action')),
      ),
      ['dry-run', 'redrive', 'abort'],
    );

    // the dry run: what would run again, and what is not declared idempotent
    assert.equal(await press(page, first, 'dry-run'), '200');
    assert.equal(
      await page.textContent('#run-status'),
      'Dry run: HTTP 200 · from two: two → three · not idempotent: two',
    );
    // a redrive needs a reason: the gateway says so
    assert.equal(await press(page, first, 'redrive'), '400');
    assert.match(String(await page.textContent('#run-status')), /VALIDATION_FAILED/);

    h.fixed = true;
    await page.fill('#run-reason', 'payments are back');
    assert.equal(await press(page, first, 'redrive'), '202');
    await page.waitForSelector(`${row(first, 'DONE')} .outcome-SUCCESS`, { timeout: 15_000 });
    assert.equal(
      await page.textContent(`${row(first, 'DONE')} .attempts-line`),
      'redriven 1× · #0 SUSPENDED FLAKY at two',
    );
    assert.equal(await page.$(`${row(first, 'DONE')} td.operate button`), null, 'a run that succeeded has no buttons');

    // Abort: the compensation runs, the run ends FAIL RUN_ABORTED
    await page.fill('#run-reason', 'the customer cancelled');
    assert.equal(await press(page, second, 'abort'), '202');
    await page.waitForSelector(`${row(second, 'DONE')} .outcome-FAIL`, { timeout: 15_000 });
    assert.deepEqual(h.calls.filter((c) => c.name === 'Release').length, 1, 'the suspended run was undone once');
  },
);

test(
  'Chromium: with gateway.admin roles and no credential, the runs have no buttons',
  { skip: needsChromium() },
  async (t) => {
    const w = await world(SUSPENDING.replace('gateway:\n', 'gateway:\n  admin: { roles: [ops] }\n'));
    const profile = await mkdtemp(join(tmpdir(), 'sagaway-chromium-'));
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      args: ARGS,
      headless: true,
    });
    t.after(async () => {
      await context.close();
      await w.close();
      await rm(profile, { recursive: true, force: true });
    });
    const runId = await suspendedRun(w.base);
    const page = context.pages()[0] ?? (await context.newPage());
    await page.goto(`${w.base}/console`);
    await page.waitForSelector(`tr[data-journal-run="${runId}"][data-status="SUSPENDED"]`);
    assert.equal(await page.getAttribute('body', 'data-operate'), 'false');
    assert.equal(await page.$(`tr[data-journal-run="${runId}"] td.operate button`), null);
  },
);
