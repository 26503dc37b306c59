// Screenshots of the console (docs/console.md, README): starts `sagaway start` on the todo
// example with a throw-away database, makes a few requests, then on the order example (with its
// payment service) an order that fails and is undone, and saves PNGs with Debian's Chromium
// through playwright-core. Run with `npm run screenshots` (it builds first).
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';
/* global fetch */

const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const OUT = resolve('docs', 'images');
const CLI = resolve('dist', 'src', 'cli', 'main.js');

function startSagaway(env, config = 'examples/todo/sagaway.yaml') {
  const child = spawn(process.execPath, [CLI, 'start', '--config', config, '--port', '0'], {
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((done, fail) => {
    let buffered = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      buffered += chunk;
      for (const line of buffered.split('\n')) {
        try {
          const parsed = JSON.parse(line);
          if (parsed.msg === 'sagaway started') done({ child, port: parsed.port });
        } catch {
          // a partial line
        }
      }
    });
    child.once('exit', (code) => fail(new Error(`sagaway start exited with ${code}`)));
  });
}

const dir = await mkdtemp(join(tmpdir(), 'sagaway-shots-'));
const { child, port } = await startSagaway({ TODO_DB: join(dir, 'todos.db') });
const base = `http://127.0.0.1:${port}`;
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 860 }, deviceScaleFactor: 1 });
  await page.goto(`${base}/console?saga=create-todo`);
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForSelector('#tracing.live');
  const post = (body) =>
    fetch(`${base}/api/request/todos`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const ok = await post({ id: 'milk', title: 'buy milk' });
  // The same id again: write.Create fails (RECORD_EXISTS), a failed run to show.
  await post({ id: 'milk', title: 'buy milk' });
  await page.waitForSelector(`tr[data-run="${ok.headers.get('x-request-id')}"]`);
  await page.click(`tr[data-run="${ok.headers.get('x-request-id')}"]`);
  await page.click('g[data-node="create"]');
  await page.locator('details[data-run-step="create"]').evaluate((d) => (d.open = true));
  await page.screenshot({ path: join(OUT, 'console-run.png') });

  const failing = page.locator('tr[data-outcome="FAIL"]').first();
  await failing.click();
  await page.click('g[data-node="failed"]');
  await page.screenshot({ path: join(OUT, 'console-failed-run.png') });

  await page.click('li[data-saga="feed"]');
  await page.click('#try-stream');
  await page.waitForSelector('#stream-events li');
  await page.waitForTimeout(300);
  await page.screenshot({ path: join(OUT, 'console-try-stream.png') });
  await compensatedRun(page);
  console.log(`screenshots written to ${OUT}`);
} finally {
  await browser.close();
  child.kill('SIGTERM');
  await rm(dir, { recursive: true, force: true });
}

/** The payment service of the order example, on a free port. */
function startPayments() {
  const child = spawn(process.execPath, ['examples/order-saga/payments.mjs', '--port', '0'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((done, fail) => {
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      const m = /listening (http:\/\/\S+)/.exec(chunk);
      if (m) done({ child, url: m[1] });
    });
    child.once('exit', (code) => fail(new Error(`payments.mjs exited with ${code}`)));
  });
}

/** An order without an address: shipping fails, the charge is refunded and the stock released. */
async function compensatedRun(page) {
  const payments = await startPayments();
  const shop = await startSagaway({ PAYMENTS_URL: payments.url }, 'examples/order-saga/sagaway.yaml');
  try {
    const shopBase = `http://127.0.0.1:${shop.port}`;
    await page.goto(`${shopBase}/console?saga=place-order`);
    await page.waitForSelector('body[data-ready="true"]');
    await page.waitForSelector('#tracing.live');
    const res = await fetch(`${shopBase}/api/request/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ order: { sku: 'chair', qty: 2 }, payment: { card: '4242-4242-4242-4242', amount: 80 } }),
    });
    const id = res.headers.get('x-request-id');
    await page.waitForSelector(`tr[data-run="${id}"][data-compensation]`);
    await page.click(`tr[data-run="${id}"]`);
    await page.click('g[data-node="charge"]');
    await page.locator('details[data-undo="charge"]').evaluate((d) => (d.open = true));
    await page.setViewportSize({ width: 1440, height: 1080 });
    await page.screenshot({ path: join(OUT, 'console-compensated-run.png') });
  } finally {
    shop.child.kill('SIGTERM');
    payments.child.kill('SIGTERM');
  }
}
