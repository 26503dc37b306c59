import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { SignJWT } from 'jose';
import type { State } from '../../src/states/state.js';
import { config, post, world, type World } from './runs-world.js';

/**
 * Who redrove or aborted a run, as its journal record keeps it (docs/runs.md): told apart by the
 * kind of credential, as every other per-caller record is (core/caller.ts): a token whose subject
 * is "loopback" or "apikey:ops" must not be recorded as this machine or as the API key ops.
 */

const SECRET = 'runs-admin-secret-of-at-least-32-bytes!!';
const OPS_KEY = 'key-ops-0123456789';
const sha = (k: string) => createHash('sha256').update(k).digest('hex');
const SQLITE = 'jr: { type: sqlite, file: ./journal.db }';

const token = (sub: string) =>
  new SignJWT({ roles: ['ops'] })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(sub)
    .setExpirationTime(Math.floor(Date.now() / 1000) + 600)
    .sign(new TextEncoder().encode(SECRET));

async function redrivenBy(w: World, headers: Record<string, string>): Promise<unknown> {
  const first = await post(w, '/api/request/orders', { order: 'o-1' });
  assert.equal(first.status, 503);
  // a dry run is enough to be admitted; the write needs the run to stay FAIL: redrive it, then read
  const res = await fetch(`${w.base}/api/runs/${first.id}/redrive`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ reason: 'who am I' }),
  });
  assert.equal(res.status, 202, await res.text());
  const state = (w.host.host as unknown as { state(alias: string): State }).state('jr');
  const page = await state.list({ filter: { runId: first.id }, limit: 1 });
  return (page.list[0]?.data['redrive'] as { by?: unknown } | undefined)?.by;
}

test('the redrive record tells a token whose subject spells "loopback" or "apikey:ops" from those callers', async (t) => {
  const cfg = config(SQLITE).replace(
    'gateway:\n',
    `gateway:\n  admin: { roles: [ops] }\n  auth:\n    jwt: { secret: "${SECRET}", algorithms: [HS256], rolesClaim: roles }\n    apiKeys:\n      - { name: ops, sha256: "${sha(OPS_KEY)}", roles: [ops] }\n`,
  );
  const w = await world(cfg);
  t.after(() => w.close());
  const byKey = await redrivenBy(w, { 'x-api-key': OPS_KEY });
  const byToken = await redrivenBy(w, { authorization: `Bearer ${await token('apikey:ops')}` });
  const byLoopbackToken = await redrivenBy(w, { authorization: `Bearer ${await token('loopback')}` });
  assert.notEqual(byToken, byKey, 'a token holder is not the API key ops');
  assert.notEqual(byLoopbackToken, 'loopback', 'a token holder is not this machine');
});
