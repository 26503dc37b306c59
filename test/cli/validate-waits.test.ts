import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { sagaway } from './spawn.js';

/**
 * `sagaway validate` warns when a distributed configuration (a nats system: several processes)
 * hands out callback links without `gateway.stream.cursorKey`: each process would sign with a
 * key of its own, so a link made by a runner would not verify on a gateway (issue 21). The
 * warning is located at each wait that hands out links (`notify`, `approvals`), nowhere else.
 */

const dir = mkdtempSync(join(tmpdir(), 'sagaway-validate-waits-'));
after(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, 'h.mjs'), "export default { name: 'h', actions: { A: { 0: () => ({}) } } };");

function config(name: string, { nats, cursorKey }: { nats: boolean; cursorKey: boolean }): string {
  const file = join(dir, name);
  writeFileSync(
    file,
    `${nats ? 'systems:\n  bus: { type: nats, servers: [nats://127.0.0.1:4222] }\n' : ''}states:
  jr: { type: postgres, url: "postgres://postgres@127.0.0.1:5432/nowhere" }
gateway:
  apis: [{ path: /x, runner: r, public: true, methods: [POST] }]
${cursorKey ? '  stream: { cursorKey: "a-shared-secret-of-32-characters!" }\n' : ''}runners:
  r:
    handlers: [./h.mjs]
    journal: jr
    sagas:
      - id: s
        path: /x
        methods: [POST]
        steps:
          - { id: start, type: start, links: [{ to: timer }] }
          - { id: timer, type: wait, for: 1h, links: [{ to: approve }] }
          - { id: approve, type: wait, signal: { name: ok }, approvals: { required: 1 }, timeout: 1h, links: [{ to: mailed }] }
          - id: mailed
            type: wait
            signal: { name: ok2 }
            timeout: 1h
            notify: { eventMeta: { handler: h, action: A, version: 0 } }
            links: [{ to: webhook }]
          - { id: webhook, type: wait, signal: { name: pay, key: parameters.id }, timeout: 1h, links: [{ to: ok }] }
          - { id: ok, type: success }
`,
  );
  return file;
}

const warnings = (stdout: string) => stdout.split('\n').filter((l) => l.includes('callback links'));

test('distributed without cursorKey: a warning at each wait that hands out links, exit 0', () => {
  const r = sagaway(['validate', '--config', config('a.yaml', { nats: true, cursorKey: false })]);
  assert.equal(r.status, 0, r.stderr + r.stdout);
  const lines = warnings(r.stdout + r.stderr);
  assert.equal(lines.length, 2, lines.join('\n'));
  assert.match(
    lines[0]!,
    /a\.yaml:\d+:\d+ runners\.r\.sagas\[0\]\.steps\[2\]: .*gateway\.stream\.cursorKey.*\(warning\)$/,
  );
  assert.match(lines[1]!, /runners\.r\.sagas\[0\]\.steps\[3\]: /);
});

test('with cursorKey, or embedded (one process): no warning', () => {
  for (const [name, opts] of [
    ['b.yaml', { nats: true, cursorKey: true }],
    ['c.yaml', { nats: false, cursorKey: false }],
  ] as const) {
    const r = sagaway(['validate', '--config', config(name, opts)]);
    assert.equal(r.status, 0, r.stderr + r.stdout);
    assert.deepEqual(warnings(r.stdout + r.stderr), [], name);
  }
});
