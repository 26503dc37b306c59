import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { silentLogger } from '../../src/core/logger.js';
import { createGateway } from '../../src/gateway/server.js';
import { feedService, ScriptedService, settingsWith } from './harness.js';
import { CHROMIUM, needsChromium } from './chromium.js';

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>feed</title></head><body><script>
window.entries = []; window.ids = []; window.opens = 0; window.done = false;
const es = new EventSource('/api/stream/feed');
es.onopen = () => { window.opens++; };
es.onmessage = (ev) => { window.entries.push(JSON.parse(ev.data).n); window.ids.push(ev.lastEventId); };
es.addEventListener('end', () => { window.done = true; es.close(); });
</script></body></html>`;

test(
  'headless Chromium: the browser reconnects by itself with Last-Event-ID and sees every entry exactly once',
  { skip: needsChromium() },
  async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sagaway-static-'));
    const profile = await mkdtemp(join(tmpdir(), 'sagaway-chromium-'));
    await writeFile(join(dir, 'index.html'), PAGE);

    // 20 entries in batches of 6, at most 4 per poll. Poll 1 sends 0-3, poll 2 sends 4-5, poll 3
    // (previous=6) sends 6-9; when poll 4 starts, the server cuts the connection: entries 10-11 of
    // that batch are not delivered yet, so the browser must resume in the middle of a batch.
    const inner = feedService(20, 6);
    const streamSockets = new Set<Socket>();
    let dropped = false;
    const box: { page?: Page } = {};
    const svc = new ScriptedService(async (req, runner, n) => {
      if (n === 4 && !dropped) {
        dropped = true;
        // entries 6-9 have reached the page (it counts them), then the cut
        await box.page!.waitForFunction(() => (globalThis as unknown as { entries: number[] }).entries.length >= 10);
        for (const s of streamSockets) s.destroy();
      }
      return inner.run(runner, req);
    });
    const gw = await createGateway({
      settings: settingsWith({
        static: dir,
        stream: { minWaitMs: 10, defaultWaitMs: 10, maxEntries: 4, heartbeatMs: 1000 },
      }),
      service: svc,
      log: silentLogger(),
    });
    const lastEventIds: string[] = [];
    gw.app.addHook('onRequest', async (request) => {
      if (request.url.startsWith('/api/stream/')) {
        const id = request.headers['last-event-id'];
        if (typeof id === 'string') lastEventIds.push(id);
        streamSockets.add(request.raw.socket);
      }
    });
    const { port } = await gw.listen(0, '127.0.0.1');
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      args: ARGS,
      headless: true,
    });
    try {
      const page = context.pages()[0] ?? (await context.newPage());
      box.page = page;
      await page.goto(`http://127.0.0.1:${port}/`);
      await page.waitForFunction(() => (globalThis as unknown as { done: boolean }).done === true, undefined, {
        timeout: 20_000,
      });
      const result = await page.evaluate(() => {
        const w = globalThis as unknown as { entries: number[]; ids: string[]; opens: number };
        return { entries: w.entries, ids: w.ids, opens: w.opens };
      });
      assert.deepEqual(
        result.entries,
        Array.from({ length: 20 }, (_, i) => i),
      );
      assert.equal(result.opens, 2, 'the browser reconnected once, by itself');
      assert.equal(lastEventIds.length, 1, 'the reconnect carried Last-Event-ID');
      assert.ok(result.ids.includes(lastEventIds[0]!), 'the Last-Event-ID is the id of a delivered entry');
      const cutAt = result.ids.indexOf(lastEventIds[0]!);
      assert.equal(cutAt, 9, 'resumed after entry 9, inside the batch of entries 6-11');
    } finally {
      await context.close();
      await gw.close();
      await rm(dir, { recursive: true, force: true });
      await rm(profile, { recursive: true, force: true });
    }
  },
);

test(
  'headless Chromium: two pages on one shared feed, one connection dropped by the server; both see every entry once',
  { skip: needsChromium() },
  async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sagaway-static-'));
    const profile = await mkdtemp(join(tmpdir(), 'sagaway-chromium-'));
    await writeFile(join(dir, 'index.html'), PAGE);
    // A live log that grows by one entry every 40 ms once both pages are in the group; a poll
    // returns what was added after `previous` (the whole backlog, so a stream that fell behind
    // catches up in one poll). When entry 8 is out, the server cuts the first page's connection;
    // that page reconnects by itself with Last-Event-ID, catches up alone and joins the group
    // again; the log stops growing 10 entries later.
    const box: { gw?: Awaited<ReturnType<typeof createGateway>> } = {};
    const streamSockets: Socket[] = [];
    const lastEventIds: string[] = [];
    let goAt = 0;
    let last = Infinity;
    let rejoined = false;
    const svc = new ScriptedService(async (req) => {
      const previous = req.input['previous'];
      if (goAt === 0)
        return { outcome: 'SUCCESS', http: 200, response: { list: [], next: 0, continue: true, wait: 20 } };
      const length = Math.min(last, Math.floor((Date.now() - goAt) / 40));
      const from = typeof previous === 'number' ? previous : 0;
      if (from > 8 && streamSockets.length === 2) streamSockets[0]!.destroy();
      if (lastEventIds.length > 0 && box.gw!.metrics.sharedMembers === 2 && !rejoined) {
        rejoined = true;
        last = length + 10;
      }
      const list = Array.from({ length: Math.max(0, length - from) }, (_, i) => ({ n: from + i }));
      const response = { list, next: Math.max(from, length), continue: from + list.length < last, wait: 40 };
      return { outcome: 'SUCCESS', http: 200, response };
    });
    const gw = await createGateway({
      settings: settingsWith({ static: dir, stream: { minWaitMs: 10, heartbeatMs: 1000, share: 'all' } }),
      service: svc,
      log: silentLogger(),
    });
    box.gw = gw;
    gw.app.addHook('onRequest', async (request) => {
      if (request.url.startsWith('/api/stream/')) {
        const id = request.headers['last-event-id'];
        if (typeof id === 'string') lastEventIds.push(id);
        streamSockets.push(request.raw.socket);
      }
    });
    const { port } = await gw.listen(0, '127.0.0.1');
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      args: ARGS,
      headless: true,
    });
    try {
      const pages = [context.pages()[0] ?? (await context.newPage()), await context.newPage()];
      for (const page of pages) {
        await page.goto(`http://127.0.0.1:${port}/`);
        await page.waitForFunction(() => (globalThis as unknown as { opens: number }).opens === 1);
      }
      const t0 = Date.now();
      while (gw.metrics.sharedMembers !== 2 && Date.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 10));
      assert.equal(gw.metrics.sharedMembers, 2, 'both pages in one group');
      goAt = Date.now();
      const results = [];
      for (const page of pages) {
        await page.waitForFunction(() => (globalThis as unknown as { done: boolean }).done === true, undefined, {
          timeout: 30_000,
        });
        results.push(
          await page.evaluate(() => {
            const w = globalThis as unknown as { entries: number[]; opens: number };
            return { entries: w.entries, opens: w.opens };
          }),
        );
      }
      assert.ok(rejoined, 'the reconnected page joined the group again');
      const all = Array.from({ length: last }, (_, i) => i);
      assert.deepEqual(results[0]!.entries, all, 'the dropped page: every entry once');
      assert.deepEqual(results[1]!.entries, all, 'the other page: every entry once');
      assert.deepEqual(
        results.map((r) => r.opens),
        [2, 1],
      );
      assert.equal(lastEventIds.length, 1, 'one reconnect, with Last-Event-ID');
    } finally {
      await context.close();
      await gw.close();
      await rm(dir, { recursive: true, force: true });
      await rm(profile, { recursive: true, force: true });
    }
  },
);
