import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { ApiSettings } from '../../src/config/settings.js';
import { ok, ScriptedService, startGateway } from '../gateway/harness.js';

/**
 * Found by the hostile re-test of issue 9 (item 10): the rate limit is counted after the auth
 * check, by the principal it found, so requests whose credential is refused (401) are never
 * counted. One client could send 80 wrong API keys or forged JWTs in a row, all answered 401,
 * none 429: an unbounded guessing and verification (JWKS/RS256) loop. Failed credentials should
 * count against the source address, and over the limit be 429 like any other request.
 */

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const apis: ApiSettings[] = [{ path: '/', runner: 'main', roles: [], public: false }];
const auth = { apiKeys: [{ name: 'alice', sha256: sha('alice-key'), roles: [] }] };

test('wrong credentials from one address are rate limited like any other request', async () => {
  const svc = new ScriptedService(() => ok({ fine: true }));
  const { base, close } = await startGateway(svc, { apis, auth, limits: { rate: { max: 5, windowMs: 60_000 } } });
  try {
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await fetch(base + '/api/request/x', { headers: { 'x-api-key': `guess-${i}` } });
      statuses.push(res.status);
      await res.arrayBuffer();
    }
    assert.equal(svc.calls.length, 0, 'no guess reached a saga');
    assert.ok(statuses.includes(429), `12 wrong keys in a row, never limited: ${statuses.join(',')}`);
  } finally {
    await close();
  }
});
