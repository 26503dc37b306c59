import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { startSagaway, type Started } from '../cli/spawn.js';
import { CHROMIUM, needsChromium } from './chromium.js';
import { SHOP_CONFIG, SHOP_MODULE } from './console-compensation-fixture.js';

/**
 * Issue 24 items 2, 3 and 4 in Chromium against `sagaway start`: the graph marks the undoable
 * steps and the pivot and fits its box; the step panel shows a `compensate`; a failed run with two
 * undos lists both with status, time and key, the run's `compensation: PARTIAL` and each try of a
 * retried step and undo; try-it's body is the input of the latest run, sent as is; a long stream
 * line wraps; no request of the page is answered 404 (the favicon).
 */

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'];

test(
  'Chromium: compensation in the console, the graph fitted, try-it with a real body, wrapped stream lines',
  { skip: needsChromium() },
  async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sagaway-undo-console-'));
    const profile = await mkdtemp(join(tmpdir(), 'sagaway-chromium-'));
    await writeFile(join(dir, 'sagaway.yaml'), SHOP_CONFIG);
    await writeFile(join(dir, 'shop.mjs'), SHOP_MODULE);
    let server: Started | undefined;
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      args: ARGS,
      headless: true,
      viewport: { width: 1280, height: 760 },
    });
    try {
      server = await startSagaway(['--config', join(dir, 'sagaway.yaml'), '--port', '0']);
      const base = `http://127.0.0.1:${server.port}`;
      const page = context.pages()[0] ?? (await context.newPage());
      const failures: string[] = [];
      page.on('response', (r) => {
        if (r.status() >= 400 && !r.url().includes('/api/request/')) failures.push(`${r.status()} ${r.url()}`);
      });
      await page.goto(`${base}/console`);
      await page.waitForSelector('body[data-ready="true"]');
      await page.waitForSelector('#tracing.live');

      // The graph: undoable steps and the pivot marked; eight steps fit the box without scrolling.
      const marks = await page.$$eval('rect[data-step]', (rects) =>
        rects
          .filter((r) => r.hasAttribute('data-undoable') || r.hasAttribute('data-pivot'))
          .map((r) => [r.getAttribute('data-step'), r.getAttribute('data-undoable'), r.getAttribute('data-pivot')]),
      );
      assert.deepEqual(marks, [
        ['reserve', 'true', null],
        ['charge', 'true', null],
        ['ship', null, 'true'],
      ]);
      assert.equal(await page.textContent('g[data-node="charge"] text.badge'), '↩ undo');
      assert.equal(await page.textContent('g[data-node="ship"] text.badge'), 'pivot');
      const fit = {
        inside: await page.$eval('#graph-box', (boxElement) => {
          const box = boxElement.getBoundingClientRect();
          return [...boxElement.querySelectorAll('rect[data-step]')]
            .map((r) => r.getBoundingClientRect())
            .every(
              (r) =>
                r.top >= box.top - 1 &&
                r.bottom <= box.bottom + 1 &&
                r.left >= box.left - 1 &&
                r.right <= box.right + 1,
            );
        }),
        zoom: await page.textContent('#zoom-level'),
      };
      assert.ok(fit.inside, 'every step is inside the graph box');
      assert.notEqual(fit.zoom, '100 %', 'a graph taller than its box is scaled down to fit');
      await page.click('#zoom-in');
      assert.notEqual(await page.textContent('#zoom-level'), fit.zoom, 'zoom in');
      await page.click('#zoom-fit');
      assert.equal(await page.textContent('#zoom-level'), fit.zoom, 'back to fit');

      // The step panel shows the compensate block.
      await page.click('g[data-node="charge"]');
      const settings = JSON.parse((await page.textContent('#step-settings')) ?? '{}');
      assert.equal(settings.compensate.eventMeta.action, 'Refund');
      assert.equal(settings.compensate.retry.attempts, 2);
      await page.click('g[data-node="ship"]');
      assert.equal(JSON.parse((await page.textContent('#step-settings')) ?? '{}').pivot, true);

      // A failed run with two undos: both listed with status, time and key; PARTIAL; every try.
      const input = { sku: 'lamp', qty: 2, note: 'gift wrap' };
      const res = await fetch(`${base}/api/request/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(input),
      });
      assert.equal(res.status, 400);
      assert.equal(((await res.json()) as { compensation: string }).compensation, 'PARTIAL');
      const requestId = res.headers.get('x-request-id')!;
      await page.waitForSelector(`tr[data-run="${requestId}"][data-compensation="PARTIAL"]`, { timeout: 5000 });
      await page.click(`tr[data-run="${requestId}"]`);
      const undos = await page.$$eval('#run-steps details.undo', (rows) =>
        rows.map((d) => [d.getAttribute('data-undo'), d.getAttribute('data-status'), d.textContent]),
      );
      assert.deepEqual(
        undos.map((u) => [u[0], u[1]]),
        [
          ['charge', 'FAIL'],
          ['reserve', 'SUCCESS'],
        ],
        'the undos, last registered first, with their status',
      );
      assert.match(undos[0]![2]!, /↩ undo charge · FAIL · [\d.]+ ms · 2 tries/);
      assert.match(undos[0]![2]!, new RegExp(`key [^ ]*:charge:undo`));
      assert.match(undos[0]![2]!, /REFUND_REFUSED: the bank refused the refund/);
      assert.match(undos[1]![2]!, /↩ undo reserve · SUCCESS · [\d.]+ ms/);
      assert.match(undos[1]![2]!, /key [^ ]*:reserve:undo/);
      assert.equal(
        await page.$$eval('details[data-undo="charge"] .attempts li', (li) =>
          li.map((l) => l.getAttribute('data-status')).join(),
        ),
        'FAIL,FAIL',
      );
      assert.match((await page.textContent('#run-compensation'))!, /^compensation: PARTIAL · 2 undos/);
      assert.match((await page.textContent('#run-title'))!, /compensation PARTIAL/);
      // The retried forward step shows each attempt.
      assert.equal(
        await page.$$eval('details[data-run-step="reserve"] .attempts li', (li) =>
          li.map((l) => `${l.getAttribute('data-attempt')}:${l.getAttribute('data-status')}`).join(),
        ),
        '1:FAIL,2:SUCCESS',
      );
      // On the graph: the undo status of each undone step.
      assert.equal(await page.getAttribute('rect[data-step="charge"]', 'data-undo-status'), 'FAIL');
      assert.equal(await page.getAttribute('rect[data-step="reserve"]', 'data-undo-status'), 'SUCCESS');
      assert.equal(await page.textContent('g[data-node="charge"] text.badge'), '↩ undo FAIL');

      // Try it: the body is the latest run's input, editable, and Send sends it.
      const body = await page.inputValue('#try-body');
      assert.deepEqual(JSON.parse(body), input, 'the example is the input of the latest run');
      await page.click('#try-send');
      await page.waitForSelector('#try-status[data-status="400"]');
      assert.ok((await page.textContent('#try-response'))!.includes('PARTIAL'), 'the saga ran with that body');
      await page.fill('#try-body', '{"sku": "desk", "qty": 0}');
      await page.click('#try-send');
      await page.locator('#try-response', { hasText: 'qty must be positive' }).waitFor();

      // A long stream line wraps inside the panel.
      await page.click('li[data-saga="news"]');
      assert.equal(await page.inputValue('#try-body'), '', 'a GET has no body');
      await page.click('#try-stream');
      await page.waitForSelector('#stream-events li[data-event="end"]', { timeout: 5000 });
      const wrap = await page.$eval('#stream-events li', (li) => ({
        scroll: li.scrollWidth,
        client: li.clientWidth,
        text: li.textContent!.length,
      }));
      assert.ok(wrap.text > 300, 'a long line');
      assert.ok(wrap.scroll <= wrap.client + 1, `the line wraps (${wrap.scroll} > ${wrap.client})`);

      // The favicon: served, and nothing the page asked for was refused.
      const icon = await page.goto(`${base}/favicon.ico`);
      assert.equal(icon?.status(), 200);
      assert.deepEqual(failures, []);
    } finally {
      await context.close();
      await server?.stop();
      await rm(dir, { recursive: true, force: true });
      await rm(profile, { recursive: true, force: true });
    }
  },
);
