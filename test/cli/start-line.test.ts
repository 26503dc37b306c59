import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { baseUrl } from '../../src/cli/started-line.js';
import { startSagaway } from './spawn.js';

/** Issue 24 item 2: `sagaway start` says where the console is and which APIs it serves; the favicon. */

const dir = mkdtempSync(join(tmpdir(), 'sagaway-start-line-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function config(consoleBlock: string): string {
  const file = join(dir, `sagaway-${consoleBlock ? 'off' : 'on'}.yaml`);
  writeFileSync(
    file,
    `gateway:
  apis:
    - { path: /todos, runner: app, methods: [GET, POST], public: true }
    - { path: /todos/:id, runner: app, public: true }
${consoleBlock}
runners:
  app:
    sagas:
      - id: list
        path: /todos
        methods: [GET, POST]
        steps:
          - { id: start, type: start, links: [{ to: done }] }
          - { id: done, type: success }
`,
  );
  return file;
}

test('start prints the console URL and the APIs, before its `sagaway started` line', async () => {
  const s = await startSagaway(['--config', config(''), '--port', '0']);
  try {
    const url = `http://127.0.0.1:${s.port}/console`;
    const words = s.lines.find((l) => typeof l['msg'] === 'string' && (l['msg'] as string).startsWith('console: '));
    assert.ok(words, 'a line that says where the console is');
    assert.equal(
      words['msg'],
      `console: ${url} · APIs: GET,POST /api/request/todos · * /api/request/todos/:id (each also as /api/stream/…)`,
    );
    const started = s.lines.find((l) => l['msg'] === 'sagaway started')!;
    assert.equal(started['console'], url);
    assert.deepEqual(started['apis'], ['GET,POST /api/request/todos', '* /api/request/todos/:id']);
    // The URL printed is the console's.
    const page = await fetch(url);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<link rel="icon" type="image\/svg\+xml" href="\/console\/favicon.svg" \/>/);
  } finally {
    await s.stop();
  }
});

test('the favicon is served at /favicon.ico and under the console, small, with the console CSP', async () => {
  const s = await startSagaway(['--config', config(''), '--port', '0']);
  try {
    for (const path of ['/favicon.ico', '/console/favicon.svg']) {
      const res = await fetch(`http://127.0.0.1:${s.port}${path}`);
      assert.equal(res.status, 200, path);
      assert.equal(res.headers.get('content-type'), 'image/svg+xml', path);
      assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'none'/, path);
      const body = await res.text();
      assert.ok(body.startsWith('<svg') && body.length < 1024, `${path}: a small SVG`);
      assert.doesNotMatch(body, /<script|style=|href=/i, `${path}: nothing active in the icon`);
    }
  } finally {
    await s.stop();
  }
});

test('with the console off, the start line names no console and /favicon.ico stays a 404', async () => {
  const s = await startSagaway(['--config', config('  console: { enabled: false }'), '--port', '0']);
  try {
    const words = s.lines.find((l) => typeof l['msg'] === 'string' && (l['msg'] as string).startsWith('APIs: '));
    assert.ok(words, 'the APIs are still said');
    const started = s.lines.find((l) => l['msg'] === 'sagaway started')!;
    assert.equal(started['console'], undefined);
    assert.equal((await fetch(`http://127.0.0.1:${s.port}/favicon.ico`)).status, 404);
  } finally {
    await s.stop();
  }
});

test('the URL printed for a wildcard or IPv6 host is one a local browser can open', () => {
  assert.equal(baseUrl(undefined, 8080), 'http://127.0.0.1:8080');
  assert.equal(baseUrl('0.0.0.0', 8080), 'http://localhost:8080');
  assert.equal(baseUrl('::', 81), 'http://localhost:81');
  assert.equal(baseUrl('::1', 81), 'http://[::1]:81');
  assert.equal(baseUrl('10.0.0.5', 81), 'http://10.0.0.5:81');
});
