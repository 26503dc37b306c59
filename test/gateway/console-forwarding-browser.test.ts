import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { chromium } from 'playwright-core';
import { CHROMIUM, needsChromium } from './chromium.js';
import { consoleGateway } from './console-gateway.js';

/**
 * The console's forwarding-header rule in Chromium (trustProxy off): the browser on this machine
 * opens the console; the same browser sending X-Real-IP or Forwarded (as a same-host proxy would
 * forward its requests) is refused with the plain 404.
 */

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'];

test(
  'Chromium: X-Real-IP or Forwarded with trustProxy off gets the 404; without, the console opens',
  { skip: needsChromium() },
  async () => {
    const profile = await mkdtemp(join(tmpdir(), 'sagaway-chromium-'));
    const c = await consoleGateway();
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      args: ARGS,
      headless: true,
    });
    try {
      const { port } = await c.gw.listen(0, '127.0.0.1');
      const url = `http://127.0.0.1:${port}/console`;
      const page = context.pages()[0] ?? (await context.newPage());
      assert.equal((await page.goto(url))?.status(), 200);
      for (const headers of [{ 'x-real-ip': '203.0.113.9' }, { forwarded: 'for=203.0.113.9' }] as Record<
        string,
        string
      >[]) {
        await page.setExtraHTTPHeaders(headers);
        const res = await page.goto(url);
        assert.equal(res?.status(), 404, JSON.stringify(headers));
        assert.equal(JSON.parse(await res!.text()).code, 'NOT_FOUND');
      }
      await page.setExtraHTTPHeaders({});
      assert.equal((await page.goto(url))?.status(), 200, 'the same browser without the header');
    } finally {
      await context.close();
      await c.close();
      await rm(profile, { recursive: true, force: true });
    }
  },
);
