import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { world } from './runs-world.js';

/**
 * The run routes count against the gateway's rate limit (docs/runs.md), and so does a request
 * they refuse for its credential (docs/gateway.md, Rate limits: "wrong API keys or forged tokens
 * cannot be tried without end").
 */

const OPS = 'key-ops-0123456789';
const sha = (k: string) => createHash('sha256').update(k).digest('hex');

const CONFIG = `
gateway:
  limits: { rate: { max: 3, window: 1m } }
  apis:
    - { path: /ok, runner: r, methods: [POST], public: true }
  auth:
    apiKeys:
      - { name: ops, sha256: "${sha(OPS)}", roles: [ops] }
  admin: { roles: [ops] }
  console: { roles: [ops] }
states:
  jr: { type: sqlite, file: ./journal.db }
runners:
  r:
    handlers: [./h.mjs]
    journal: jr
    sagas:
      - id: okay
        path: /ok
        methods: [POST]
        steps:
          - { id: start, type: start, links: [{ to: one }] }
          - { id: one, type: event, eventMeta: { handler: h, action: Ok, version: 0 }, links: [{ to: done }] }
          - { id: done, type: success }
`;

async function triedWith(path: string, t: { after(fn: () => Promise<void>): void }): Promise<number[]> {
  const w = await world(CONFIG);
  t.after(() => w.close());
  const codes: number[] = [];
  for (let i = 0; i < 6; i++) {
    const res = await fetch(`${w.base}${path}`, { headers: { 'x-api-key': `guess-${i}-0123456789` } });
    await res.arrayBuffer();
    codes.push(res.status);
  }
  return codes;
}

test('wrong API keys tried on /api/runs are counted: past the limit the answer is 429', async (t) => {
  const codes = await triedWith('/api/runs', t);
  assert.equal(codes[0], 401);
  assert.equal(codes[5], 429, `codes: ${codes.join(', ')}`);
});

test('wrong API keys tried on the console (with roles) are counted: past the limit the answer is 429', async (t) => {
  const codes = await triedWith('/console/api/model', t);
  assert.equal(codes[0], 401);
  assert.equal(codes[5], 429, `codes: ${codes.join(', ')}`);
});
