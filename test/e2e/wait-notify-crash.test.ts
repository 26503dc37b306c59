import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { startSagaway, type Started } from '../cli/spawn.js';

/**
 * A wait's `notify` is sent at least once (issue 21): `sagaway start` killed (-9) while the
 * notify event is out leaves the run's journal RUNNING; the next process's orphan scan runs the
 * run to its wait again and sends the notify again with the same idempotency key, and the run
 * then waits and resumes as usual. Real processes, a SQLite journal.
 */

const dir = mkdtempSync(join(tmpdir(), 'sagaway-notify-crash-'));
const sent = join(dir, 'sent.log');
let server: Started | undefined;
after(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

writeFileSync(
  join(dir, 'mail.mjs'),
  `import { appendFileSync, existsSync, readFileSync } from 'node:fs';
const LOG = ${JSON.stringify(sent)};
export default {
  name: 'mail',
  actions: {
    Send: {
      0: async (input, ctx) => {
        const first = !existsSync(LOG);
        appendFileSync(LOG, ctx.idempotencyKey + ' ' + input.wait.callbacks.approve + '\\n');
        // the first delivery hangs: the test kills the process while it is out
        if (first) await new Promise((r) => setTimeout(r, 60_000));
        return {};
      },
    },
  },
};
`,
);
writeFileSync(
  join(dir, 'sagaway.yaml'),
  `
gateway:
  apis: [{ path: /x, runner: r, public: true, methods: [POST] }]
  stream: { cursorKey: "a-key-kept-across-the-restart-0123" }
states:
  jr: { type: sqlite, file: ./journal.db }
runners:
  r:
    handlers: [./mail.mjs]
    journal: jr
    resumeInterval: 500ms
    waitPoll: 200ms
    sagas:
      - id: x
        path: /x
        methods: [POST]
        steps:
          - { id: start, type: start, links: [{ to: w }] }
          - id: w
            type: wait
            signal: { name: approval }
            timeout: 1h
            notify: { eventMeta: { handler: mail, action: Send, version: 0, timeout: 90s } }
            links: [{ to: ok, when: [SIGNAL] }]
          - { id: ok, type: success, http: 201 }
`,
);

const lines = () => (existsSync(sent) ? readFileSync(sent, 'utf8').trim().split('\n') : []);

async function until<T>(what: string, fn: () => T | undefined | false, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('killed while the notify is out: sent again after the restart with the same key, then the run waits and resumes', async () => {
  const file = join(dir, 'sagaway.yaml');
  server = await startSagaway(['--config', file, '--port', '0']);
  const first = server;
  // the request hangs with its notify; the process dies under it
  void fetch(`http://127.0.0.1:${first.port}/api/request/x`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  }).catch(() => undefined);
  await until('the first notify', () => lines().length === 1);
  first.child.kill('SIGKILL');
  await new Promise((r) => first.child.once('exit', r));

  server = await startSagaway(['--config', file, '--port', '0']);
  const [a, b] = await until('the notify again', () => (lines().length >= 2 ? lines() : undefined));
  const [keyA, linkA] = a!.split(' ');
  const [keyB, linkB] = b!.split(' ');
  assert.equal(keyB, keyA, 'the same idempotency key');
  assert.match(keyA!, /^[\w-]+:w:notify$/);
  // both links name the same wait (their expiry is computed again at the second park)
  const claim = (link: string) => {
    const { w, r, s, v } = JSON.parse(
      Buffer.from(link.slice('/api/callbacks/'.length).split('.')[0]!, 'base64url').toString('utf8'),
    ) as Record<string, unknown>;
    return { w, r, s, v };
  };
  assert.deepEqual(claim(linkB!), claim(linkA!));
  const runId = keyA!.slice(0, -':w:notify'.length);
  const base = `http://127.0.0.1:${server.port}`;
  const status = async () => (await (await fetch(`${base}/api/status/${runId}`)).json()) as Record<string, unknown>;
  let s = await status();
  for (let i = 0; i < 100 && s['status'] !== 'WAITING'; i++) {
    await new Promise((r) => setTimeout(r, 100));
    s = await status();
  }
  assert.equal(s['status'], 'WAITING', JSON.stringify(s));
  // the link of the first notify, signed before the crash, works (once)
  const approved = await fetch(base + linkA!, { method: 'POST' });
  assert.equal(approved.status, 202);
  for (let i = 0; i < 100 && s['status'] !== 'DONE'; i++) {
    await new Promise((r) => setTimeout(r, 100));
    s = await status();
  }
  assert.deepEqual([s['status'], s['outcome'], s['http']], ['DONE', 'SUCCESS', 201]);
  assert.equal(lines().length, 2, 'no third notify');
  assert.equal((await fetch(base + linkB!, { method: 'POST' })).status, 409, 'single use');
});
