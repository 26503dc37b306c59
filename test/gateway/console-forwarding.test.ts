import assert from 'node:assert/strict';
import { test } from 'node:test';
import { consoleGateway } from './console-gateway.js';

/**
 * The console's loopback rule with `trustProxy` off (the default): a reverse proxy on this
 * machine connects from 127.0.0.1 and names the real client in a forwarding header. Each of the
 * three usual headers alone must close the console (nginx's usual setup sends X-Real-IP only;
 * RFC 7239 proxies send Forwarded only), whatever address it names.
 */

const HEADERS: Record<string, string>[] = [
  { 'x-real-ip': '203.0.113.9' },
  { forwarded: 'for=203.0.113.9;proto=https' },
  { 'x-forwarded-for': '203.0.113.9' },
  // even naming a loopback client: without trustProxy the gateway cannot tell who wrote it
  { 'x-real-ip': '127.0.0.1' },
  { forwarded: 'for=127.0.0.1' },
  { 'X-Real-IP': '203.0.113.9' },
];

test('trustProxy off: X-Real-IP, Forwarded or X-Forwarded-For alone, from a loopback socket, gets the plain 404', async () => {
  const c = await consoleGateway();
  try {
    const get = (url: string, headers: Record<string, string>) =>
      c.gw.app.inject({
        method: 'GET',
        url,
        headers: { host: 'localhost:8080', ...headers },
        remoteAddress: '127.0.0.1',
      });
    for (const url of ['/console', '/console/api/model', '/console/api/feed']) {
      // the same request without the header is served: the header alone decides
      if (url !== '/console/api/feed') assert.equal((await get(url, {})).statusCode, 200, url);
      for (const headers of HEADERS) {
        const res = await get(url, headers);
        assert.equal(res.statusCode, 404, `${url} with ${JSON.stringify(headers)}`);
        assert.equal(res.json().detail, 'no route serves this path');
      }
    }
  } finally {
    await c.close();
  }
});

test('trustProxy off, over a real socket: X-Real-IP and Forwarded close the console', async () => {
  const c = await consoleGateway();
  try {
    const { port } = await c.gw.listen(0, '127.0.0.1');
    const status = async (headers: Record<string, string>) =>
      (await fetch(`http://127.0.0.1:${port}/console/api/model`, { headers })).status;
    assert.equal(await status({}), 200);
    assert.equal(await status({ 'x-real-ip': '203.0.113.9' }), 404);
    assert.equal(await status({ forwarded: 'for=203.0.113.9' }), 404);
  } finally {
    await c.close();
  }
});
