import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withoutToken } from '../../gateway/waits/callback-page.js';
import { CallbackTokens } from './tokens.js';

const claim = { waitId: 'w-1', runId: 'run-1', step: 'approval', visit: 1, expiresAt: 1_900_000_000_000 };

test('a callback token verifies with the shared key only, and names exactly its wait', () => {
  const a = new CallbackTokens('a shared cursor key, at least 32 bytes long');
  const token = a.sign(claim);
  assert.deepEqual(a.verify(token), claim);
  assert.deepEqual(
    new CallbackTokens('a shared cursor key, at least 32 bytes long').verify(token),
    claim,
    'another replica',
  );
  assert.equal(new CallbackTokens('another key entirely, also 32 bytes long').verify(token), undefined);
  assert.equal(new CallbackTokens().verify(token), undefined, 'a random per-process key');
  const [body, tag] = token.split('.') as [string, string];
  // another claim under the same tag, a flipped tag, a non-canonical spelling, junk
  const other = Buffer.from(JSON.stringify({ w: 'w-2', r: 'run-1', s: 'approval', v: 1, e: claim.expiresAt })).toString(
    'base64url',
  );
  assert.equal(a.verify(`${other}.${tag}`), undefined);
  assert.equal(a.verify(`${body}.${tag.slice(0, -1)}${tag.endsWith('A') ? 'B' : 'A'}`), undefined);
  assert.equal(a.verify(`${body}.${tag}.x`), undefined);
  assert.equal(a.verify('x'.repeat(5000)), undefined);
  assert.equal(a.verify(''), undefined);
});

test('a callback token is never logged', () => {
  assert.equal(withoutToken('/api/callbacks/eyJ3Ijoi.abc'), '/api/callbacks/<token>');
  assert.equal(withoutToken('/api/status/x'), '/api/status/x');
});
