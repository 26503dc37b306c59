import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withoutToken } from './callback-page.js';

test('withoutToken: a callback token never reaches a log line, however the path spells it', () => {
  const masked = '/api/callbacks/<token>';
  for (const path of [
    '/api/callbacks/abc.def',
    '//api/callbacks/abc.def',
    '/api//callbacks/abc.def',
    '/api/%63allbacks/abc.def',
    '/API/Callbacks/abc.def',
    '/api/callbacks%2Fabc.def',
  ])
    assert.equal(withoutToken(path), masked, path);
  for (const path of ['/api/request/orders/42', '/api/stream/feed', '/api/status/r-1', '/api/%ZZ', '/callbacks/x'])
    assert.equal(withoutToken(path), path, path);
});
