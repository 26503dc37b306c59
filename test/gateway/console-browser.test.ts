import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Page } from 'playwright-core';
import { startSagaway, type Started } from '../cli/spawn.js';
import { skipOrFail } from '../require-services.js';
import { canaryForms } from '../security/inject-canary.js';
import { CANARY, CONSOLE_CONFIG, CONSOLE_ENV, ECHO_MODULE } from './console-fixture.js';
import { CHROMIUM, needsChromium } from './chromium.js';

/**
 * The console in Chromium against a real `sagaway start` process (issue 14, "What must be
 * shown"): the graph with its configured colours, a curl request showing up as a run within 1 s
 * with its path, a failing run marking the failed step, the stream panel, a non-loopback client
 * refused, and the canary secret nowhere in the page or the feed.
 */

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'];
const run = promisify(execFile);

/** A request made with curl (as a user would); its status and request id. */
async function curl(
  url: string,
  method = 'GET',
  body?: string,
): Promise<{ status: number; requestId: string; at: number }> {
  const args = ['-s', '-o', '/dev/null', '-D', '-', '-X', method, url];
  if (body !== undefined) args.push('-H', 'content-type: application/json', '--data', body);
  const { stdout } = await run('curl', args);
  const at = Date.now();
  const status = Number(/^HTTP\/[\d.]+ (\d+)/m.exec(stdout)?.[1]);
  const requestId = /^x-request-id: (\S+)/im.exec(stdout)?.[1] ?? '';
  return { status, requestId, at };
}

/** The non-loopback IPv4 address of this machine, if it has one. */
function outsideAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return undefined;
}

function statusOf(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

async function waitForRun(page: Page, requestId: string, outcome: string, sentAt: number): Promise<number> {
  await page.waitForSelector(`tr[data-run="${requestId}"][data-outcome="${outcome}"]`, { timeout: 1000 });
  return Date.now() - sentAt;
}

function assertNoCanary(text: string, where: string) {
  for (const form of canaryForms(CANARY)) assert.ok(!text.includes(form), `${where} holds a form of the canary`);
}

test(
  'Chromium against `sagaway start`: graph colours, live runs with their path, a failed step, the stream panel, no canary, loopback only',
  { skip: needsChromium() },
  async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sagaway-console-'));
    const profile = await mkdtemp(join(tmpdir(), 'sagaway-chromium-'));
    await writeFile(join(dir, 'sagaway.yaml'), CONSOLE_CONFIG);
    await writeFile(join(dir, 'echo.mjs'), ECHO_MODULE);
    let server: Started | undefined;
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      args: ARGS,
      headless: true,
    });
    try {
      // On every address, so that a client from outside this machine can be tried for real.
      server = await startSagaway(['--config', join(dir, 'sagaway.yaml'), '--port', '0', '--host', '0.0.0.0'], {
        ...CONSOLE_ENV,
        LOG_LEVEL: 'info',
      });
      const base = `http://127.0.0.1:${server.port}`;
      const page = context.pages()[0] ?? (await context.newPage());
      const opened = await page.goto(`${base}/`);
      assert.equal(new URL(page.url()).pathname, '/console', '/ leads to the console');
      assert.equal(opened?.status(), 200);
      await page.waitForSelector('body[data-ready="true"]');
      await page.waitForSelector('#tracing.live');

      // The graph of the first saga, with its configured colours and the defaults of its kinds.
      const fills = await page.$$eval('rect[data-step]', (rects) =>
        Object.fromEntries(rects.map((r) => [r.getAttribute('data-step'), r.getAttribute('fill')])),
      );
      assert.deepEqual(fills, {
        start: '#f6f8fa',
        check: '#fff3b0',
        store: '#cfe8ff',
        tag: '#ddf4ff',
        done: '#dafbe1',
        rejected: '#ffebe9',
        failed: '#ffebe9',
      });
      assert.equal(await page.getAttribute('rect[data-step="check"]', 'stroke'), '#9a6700');
      assert.equal(await page.textContent('g[data-node="check"] title'), 'qty must be a positive number');
      assert.ok((await page.textContent('#graph'))!.includes('* (p2)'), 'edge labels with when and priority');
      await page.click('g[data-node="tag"]');
      const settings = JSON.parse((await page.textContent('#step-settings')) ?? '{}');
      assert.equal(
        settings.effective[0].settings.action,
        'Show',
        'the effective eventMeta after the structural action',
      );

      // A request made with curl appears as a run within 1 s, with its path on the graph.
      const ok = await curl(`${base}/api/request/orders`, 'POST', '{"qty": 2, "password": "pw-not-shown"}');
      assert.equal(ok.status, 201);
      const okDelay = await waitForRun(page, ok.requestId, 'SUCCESS', ok.at);
      assert.ok(okDelay <= 1000, `${okDelay} ms`);
      await page.click(`tr[data-run="${ok.requestId}"]`);
      const path = await page.$$eval('rect[data-visited="true"]', (rects) =>
        rects.map((r) => [r.getAttribute('data-step'), r.getAttribute('data-status')]),
      );
      assert.deepEqual(path.sort(), [
        ['check', 'SUCCESS'],
        ['done', 'SUCCESS'],
        ['start', 'SUCCESS'],
        ['store', 'SUCCESS'],
        ['tag', 'SUCCESS'],
      ]);
      assert.equal(await page.$$eval('.edge.taken', (e) => e.length), 4, 'the edges taken');
      assert.ok((await page.textContent('#run-steps'))!.includes('store · SUCCESS'));

      // A failing run marks the failed step: an event that fails (RECORD_NOT_FOUND) ...
      const missing = await curl(`${base}/api/request/orders/no-such-order`);
      assert.equal(missing.status, 404);
      await waitForRun(page, missing.requestId, 'FAIL', missing.at);
      await page.click(`tr[data-run="${missing.requestId}"]`);
      assert.equal(
        await page.getAttribute('rect[data-step="load"]', 'data-status'),
        'FAIL',
        'the graph of get-order, load failed',
      );
      assert.equal(await page.getAttribute('rect[data-step="load"]', 'data-visited'), 'true');
      assert.equal(await page.getAttribute('rect[data-step="done"]', 'data-visited'), null);
      assert.ok((await page.textContent('#run-steps'))!.includes('RECORD_NOT_FOUND'));
      // ... and a fail step reached by the flow.
      const rejected = await curl(`${base}/api/request/orders`, 'POST', '{"qty": 0}');
      await waitForRun(page, rejected.requestId, 'FAIL', rejected.at);
      await page.click(`tr[data-run="${rejected.requestId}"]`);
      assert.equal(await page.getAttribute('rect[data-step="rejected"]', 'data-status'), 'FAIL');
      assert.equal(await page.getAttribute('rect[data-step="store"]', 'data-visited'), null);

      // Try it: the stream form, its events with their cursor ids, then the end.
      await page.click('li[data-saga="feed"]');
      await page.click('#try-stream');
      await page.waitForSelector('#stream-events li[data-event="end"]', { timeout: 5000 });
      const events = await page.$$eval('#stream-events li', (items) =>
        items.map((i) => [i.getAttribute('data-event'), i.getAttribute('data-event-id'), i.textContent]),
      );
      assert.equal(events.length, 4);
      assert.deepEqual(
        events.slice(0, 3).map((e) => e[0]),
        ['message', 'message', 'message'],
      );
      assert.ok(
        events.every((e) => (e[1] ?? '').length > 8),
        'every event shows its cursor id',
      );
      assert.ok(events[0]![2]!.includes('{"n":1}'));
      // Try it: one request.
      await page.click('li[data-saga="place-order"]');
      await page.fill('#try-body', '{"qty": 5}');
      await page.click('#try-send');
      await page.waitForSelector('#try-status[data-status="201"]');

      // The canary: injected into an action that echoes it; neither the page nor the feed has it.
      await page.click(`tr[data-run="${ok.requestId}"]`);
      const html = await page.content();
      assert.ok(html.includes('tagged'), 'the snapshots are in the page');
      assertNoCanary(html, 'the page');
      assert.ok(!html.includes('pw-not-shown'));
      const feed = await page.evaluate(async () => {
        const controller = new AbortController();
        const res = await fetch('/console/api/feed', { signal: controller.signal });
        const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
        let text = '';
        const until = Date.now() + 1500;
        while (Date.now() < until && (text.match(/event: run/g) ?? []).length < 5) text += (await reader.read()).value;
        controller.abort();
        return text;
      });
      assert.ok((feed.match(/event: run/g) ?? []).length >= 5, 'the ring is replayed to a new watcher');
      assertNoCanary(feed, 'the feed');

      // Refused: a client on another address of this machine (not loopback), a foreign Host, a proxy.
      // A machine without one cannot show it: the test says so, and fails under SAGAWAY_REQUIRE_SERVICES=1.
      const outside = outsideAddress();
      if (outside === undefined)
        skipOrFail('no non-loopback address on this machine: the console is not tried from one');
      else {
        assert.equal(await statusOf(`http://${outside}:${server.port}/console`), 404);
        assert.equal(await statusOf(`http://${outside}:${server.port}/console/api/feed`), 404);
        const refused = await page.goto(`http://${outside}:${server.port}/console`);
        assert.equal(refused?.status(), 404, 'Chromium from a non-loopback address');
      }
      assert.equal(await statusOf(`${base}/console`, { host: 'evil.example' }), 404);
      assert.equal(await statusOf(`${base}/console`, { 'x-forwarded-for': '203.0.113.7' }), 404);
      assert.equal(await statusOf(`${base}/console`), 200);
    } finally {
      await context.close();
      await server?.stop();
      await rm(dir, { recursive: true, force: true });
      await rm(profile, { recursive: true, force: true });
    }
  },
);
