import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { EventSource } from 'eventsource';
import { loadConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/core/logger.js';
import { createGateway, type Gateway } from '../../src/gateway/server.js';
import { BUILTIN_HANDLERS } from '../../src/handlers/index.js';
import { Host } from '../../src/runner/host.js';
import { createState } from '../../src/states/index.js';
import { createCluster } from '../../src/systems/index.js';

// The README's main job: the todo example, served for real, with its live feed.
const dir = mkdtempSync(join(tmpdir(), 'sagaway-feed-'));
let host: Host;
let gateway: Gateway;
let base: string;

before(async () => {
  const { settings } = await loadConfig('examples/todo/sagaway.yaml', { env: { TODO_DB: join(dir, 'todos.db') } });
  host = await Host.start({ settings, log: silentLogger(), builtins: BUILTIN_HANDLERS, createState, createCluster });
  gateway = await createGateway({ settings, service: host, log: silentLogger() });
  const { port } = await gateway.listen(0, '127.0.0.1');
  base = `http://127.0.0.1:${port}`;
});
after(async () => {
  await gateway.close();
  await host.close();
  rmSync(dir, { recursive: true, force: true });
});

async function create(title: string): Promise<string> {
  const r = await fetch(`${base}/api/request/todos`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ title }),
  });
  assert.equal(r.status, 201);
  return ((await r.json()) as { id: string }).id;
}

test('the feed sends every todo once, pages through them, then sends new ones as they come', async () => {
  const first: string[] = [];
  for (let i = 0; i < 25; i++) first.push(await create(`todo ${i}`));
  const received: string[] = [];
  const ids: string[] = [];
  const es = new EventSource(`${base}/api/stream/feed`);
  try {
    const waitFor = (n: number) =>
      new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`only ${received.length} of ${n} events`)), 8000);
        const check = () => {
          if (received.length >= n) {
            clearTimeout(t);
            resolve();
          } else setTimeout(check, 20);
        };
        check();
      });
    es.onmessage = (e) => {
      received.push((JSON.parse(e.data) as { id: string }).id);
      ids.push(e.lastEventId);
    };
    await waitFor(25);
    assert.deepEqual(received, first, 'the first 25 in order, over two pages');
    const later = [await create('later 1'), await create('later 2')];
    await waitFor(27);
    // Two more polls delivered to the stream (the first may have started before the last create):
    // the gateway wrote no entry again, and the client got none.
    const polls = gateway.metrics.memberPolls.value;
    const end = Date.now() + 10_000;
    while (gateway.metrics.memberPolls.value < polls + 2 && Date.now() < end)
      await new Promise((r) => setTimeout(r, 20));
    assert.ok(gateway.metrics.memberPolls.value >= polls + 2, 'the stream polled again');
    assert.equal(gateway.metrics.entriesWritten.value, 27, 'every entry written once');
    assert.deepEqual(received, [...first, ...later]);
    assert.equal(new Set(ids).size, ids.length, 'every event has its own cursor id');
  } finally {
    es.close();
  }
});

test('one-shot forms of the same example: JSON, CSV, problem+json', async () => {
  const list = await fetch(`${base}/api/request/todos`);
  assert.equal(list.status, 200);
  assert.ok(((await list.json()) as { list: unknown[] }).list.length > 0);
  const csv = await fetch(`${base}/api/request/todos.csv`);
  assert.match(csv.headers.get('content-type') ?? '', /^text\/csv/);
  assert.match((await csv.text()).split('\r\n')[0] ?? '', /^id,version,data/);
  const missing = await fetch(`${base}/api/request/todos/nope`);
  assert.equal(missing.status, 404);
  assert.equal(((await missing.json()) as { code: string }).code, 'RECORD_NOT_FOUND');
});
