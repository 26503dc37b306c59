import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { silentLogger } from '../../src/core/logger.js';
import { createGateway } from '../../src/gateway/server.js';
import { delay, ok, ScriptedService, settingsWith } from './harness.js';
import { CHROMIUM, needsChromium } from './chromium.js';
import { range } from './sse-client.js';

/**
 * The long-poll client loop of docs/streams.md#long-poll, as written there, in headless
 * Chromium: it follows a live feed with `offset` (and `cursor` after a 204), gets every entry
 * once and in order, and stops at the end. The browser's own HTTP cache sits in between (the
 * answers are `public`): it must not make the loop repeat or skip anything either.
 */

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>long-poll</title></head><body><script>
window.entries = []; window.statuses = []; window.done = false;
async function follow(url) {
  let offset, cursor;
  for (;;) {
    const u = new URL(url, location.href);
    u.searchParams.set('live', 'long-poll');
    if (offset) u.searchParams.set('offset', offset);
    if (cursor) u.searchParams.set('cursor', cursor);
    const res = await fetch(u);
    window.statuses.push(res.status);
    if (res.status === 200) {
      const batch = await res.json();
      for (const entry of batch.list) window.entries.push(entry.n);
      offset = batch.offset;
      if (batch.end) return;
    } else if (res.status === 204) {
      offset = res.headers.get('Stream-Next-Offset');
    } else {
      await new Promise((r) => setTimeout(r, 1000)); // an error: back off, then ask again
    }
    cursor = res.headers.get('Stream-Cursor') ?? undefined;
  }
}
follow('/api/stream/feed').then(() => { window.done = true; });
</script></body></html>`;

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'];

test(
  'headless Chromium: a long-poll loop with offset and cursor sees every entry once, then the end',
  { skip: needsChromium() },
  async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sagaway-static-'));
    const profile = await mkdtemp(join(tmpdir(), 'sagaway-chromium-'));
    await writeFile(join(dir, 'index.html'), PAGE);
    let length = 0;
    let closed = false;
    const svc = new ScriptedService((req) => {
      const from = typeof req.input['previous'] === 'number' ? req.input['previous'] : 0;
      const list = range(from, length).map((n) => ({ n }));
      return ok({ list, next: length, continue: !(closed && from + list.length >= length), wait: 150 });
    });
    const gw = await createGateway({
      settings: settingsWith({
        static: dir,
        apis: [{ path: '/', runner: 'main', roles: [], public: true, stream: { share: 'all' } }],
        stream: { minWaitMs: 10, longPoll: { holdMs: 5000, maxAge: 5, staleWhileRevalidate: 10 } },
      }),
      service: svc,
      log: silentLogger(),
    });
    const { port } = await gw.listen(0, '127.0.0.1');
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      args: ARGS,
      headless: true,
    });
    try {
      const page = context.pages()[0] ?? (await context.newPage());
      await page.goto(`http://127.0.0.1:${port}/`);
      for (let i = 0; i < 15; i++) {
        await delay(60);
        length++;
      }
      await delay(400); // quiet for a while: 204s
      for (let i = 0; i < 5; i++) {
        await delay(60);
        length++;
      }
      closed = true;
      await page.waitForFunction(() => (globalThis as unknown as { done: boolean }).done === true, undefined, {
        timeout: 30_000,
      });
      const result = await page.evaluate(() => {
        const w = globalThis as unknown as { entries: number[]; statuses: number[] };
        return { entries: w.entries, statuses: w.statuses };
      });
      assert.deepEqual(result.entries, range(0, 20), 'every entry once, in order');
      assert.ok(result.statuses.includes(204), `a quiet feed answered 204: ${result.statuses.join(',')}`);
      assert.ok(
        result.statuses.every((s) => s === 200 || s === 204),
        result.statuses.join(','),
      );
    } finally {
      await context.close();
      await gw.close();
      await rm(dir, { recursive: true, force: true });
      await rm(profile, { recursive: true, force: true });
    }
  },
);
