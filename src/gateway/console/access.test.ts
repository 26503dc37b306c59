import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isLoopbackAddress, isLoopbackHost } from './access.js';

test('loopback addresses: 127.0.0.0/8, ::1 and IPv4-mapped 127.x; nothing else', () => {
  for (const a of ['127.0.0.1', '127.255.0.9', '::1', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', '::FFFF:127.1.2.3'])
    assert.equal(isLoopbackAddress(a), true, a);
  for (const a of ['10.0.0.1', '128.0.0.1', '::2', '::ffff:10.0.0.1', '0.0.0.0', '::', 'localhost', '', undefined])
    assert.equal(isLoopbackAddress(a), false, String(a));
});

test('loopback Host headers: localhost, *.localhost and loopback addresses, with or without a port', () => {
  for (const h of [
    'localhost',
    'localhost:8080',
    'LOCALHOST',
    'app.localhost:3000',
    '127.0.0.1:8080',
    '[::1]:8080',
    '[::1]',
  ])
    assert.equal(isLoopbackHost(h), true, h);
  for (const h of ['evil.example', 'localhost.evil.example', '127.0.0.1.nip.io', '[::2]:80', '[::1', '', undefined])
    assert.equal(isLoopbackHost(h), false, String(h));
});
