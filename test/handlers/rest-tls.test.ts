import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { SagawayError } from '../../src/core/errors.js';
import { RestClient } from '../../src/handlers/rest/client.js';
import type { LookupFn } from '../../src/handlers/rest/connector.js';
import { buildRequest } from '../../src/handlers/rest/request.js';
import { httpSystem } from './rest-loopback.js';

/*
 * https through the guarded connector: the socket goes to the checked IP (127.0.0.1 here), while
 * SNI and certificate verification still use the URL's host name. The fixture is a self-signed
 * certificate for api.example.test (test/handlers/rest-tls-*.pem, valid until 2126).
 */

const fixture = (name: string): string =>
  readFileSync(new URL(`../../../test/handlers/${name}`, import.meta.url), 'utf8');
const cert = fixture('rest-tls-cert.pem');
const key = fixture('rest-tls-key.pem');
const never = new AbortController().signal;
const toLoopback: LookupFn = async () => [{ address: '127.0.0.1', family: 4 }];

async function outcome(p: Promise<{ body: unknown }>): Promise<unknown> {
  try {
    return (await p).body;
  } catch (err) {
    assert.ok(err instanceof SagawayError);
    return err.code;
  }
}

describe('https through the guarded connector', () => {
  let server: Server;
  let port: number;
  const servernames: (string | false | null)[] = [];
  before(async () => {
    server = createServer({ cert, key }, (req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ tls: true, path: req.url }));
    });
    server.on('secureConnection', (socket) => servernames.push(socket.servername));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const call = (host: string, options: { ca?: string } = {}): Promise<unknown> => {
    const system = httpSystem('tls', `https://${host}:${port}/v1`, { allowPrivate: true });
    const client = new RestClient(system, { lookup: toLoopback, ...options });
    return outcome(client.send(buildRequest(system, { path: '/x' }, undefined), never)).finally(() => client.close());
  };

  test('the name is verified and sent as SNI while the checked IP is connected to', async () => {
    assert.deepEqual(await call('api.example.test', { ca: cert }), { tls: true, path: '/v1/x' });
    assert.equal(servernames.at(-1), 'api.example.test');
  });

  test('a certificate for another name is refused: UPSTREAM_ERROR', async () => {
    assert.equal(await call('other.example.test', { ca: cert }), 'UPSTREAM_ERROR');
  });

  test('an untrusted certificate is refused: UPSTREAM_ERROR', async () => {
    assert.equal(await call('api.example.test'), 'UPSTREAM_ERROR');
  });

  test('the default policy still refuses the loopback address behind the name', async () => {
    const system = httpSystem('tls', `https://api.example.test:${port}/v1`);
    const client = new RestClient(system, { lookup: toLoopback, ca: cert });
    const before = servernames.length;
    assert.equal(await outcome(client.send(buildRequest(system, {}, undefined), never)), 'SSRF_BLOCKED');
    await client.close();
    assert.equal(servernames.length, before);
  });
});
