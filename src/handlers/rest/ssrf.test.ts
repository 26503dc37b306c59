import assert from 'node:assert/strict';
import { connect as netConnect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { SagawayError } from '../../core/errors.js';
import { httpSystem, startLoopback, type LoopbackServer } from '../../../test/handlers/rest-loopback.js';
import { RestClient } from './client.js';
import { guardedConnector, type ConnectFn, type ConnectTarget, type LookupFn } from './connector.js';
import { buildRequest, type RestRequest } from './request.js';

/*
 * The SSRF matrix. No packet may leave 127.0.0.0/8 or ::1: targets outside loopback are only
 * ever handed to an injected connect hook that records and refuses, or that connects to a
 * loopback server instead (never to the address it was given).
 */

const never = new AbortController().signal;

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'OK';
  } catch (err) {
    assert.ok(err instanceof SagawayError, `expected a SagawayError, got ${String(err)}`);
    if (err.code === 'SSRF_BLOCKED') assert.equal(err.http, 403);
    return err.code;
  }
}

/** A lookup over a fixed table that records every name asked. */
function fakeDns(table: Record<string, string[]>): LookupFn & { asked: string[] } {
  const asked: string[] = [];
  const fn = async (hostname: string) => {
    asked.push(hostname);
    const found = table[hostname];
    if (!found) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return found.map((address) => ({ address, family: address.includes(':') ? (6 as const) : (4 as const) }));
  };
  return Object.assign(fn, { asked });
}

/** A connect hook that records every target and refuses: nothing is ever sent. */
function refusingHook(): ConnectFn & { seen: ConnectTarget[] } {
  const seen: ConnectTarget[] = [];
  const fn = async (target: ConnectTarget): Promise<Socket> => {
    seen.push(target);
    throw Object.assign(new Error('connect refused by test hook'), { code: 'ECONNREFUSED' });
  };
  return Object.assign(fn, { seen });
}

/** A connect hook that records every target and connects to a loopback port whatever the target was. */
function loopbackHook(port: number): ConnectFn & { seen: ConnectTarget[] } {
  const seen: ConnectTarget[] = [];
  const fn = (target: ConnectTarget): Promise<Socket> => {
    seen.push(target);
    return new Promise((resolve, reject) => {
      const socket = netConnect({ host: '127.0.0.1', port }, () => resolve(socket));
      socket.once('error', reject);
    });
  };
  return Object.assign(fn, { seen });
}

describe('loopback forms against a real listener, default policy', () => {
  let v4: LoopbackServer;
  let v6: LoopbackServer;
  before(async () => {
    v4 = await startLoopback();
    v6 = await startLoopback(undefined, '::1');
  });
  after(async () => {
    await v4.close();
    await v6.close();
  });

  const forms = (): string[] => [
    `http://127.0.0.1:${v4.port}`,
    `http://127.1:${v4.port}`,
    `http://0x7f.0.0.1:${v4.port}`,
    `http://2130706433:${v4.port}`,
    `http://[::ffff:127.0.0.1]:${v4.port}`,
    `http://[::1]:${v6.port}`,
  ];

  test('every form fails SSRF_BLOCKED and the listener accepts no connection', async () => {
    for (const baseUrl of forms()) {
      const system = httpSystem('target', baseUrl);
      const client = new RestClient(system);
      assert.equal(
        await code(client.send(buildRequest(system, { path: '/json' }, undefined), never)),
        'SSRF_BLOCKED',
        baseUrl,
      );
      await client.close();
    }
    assert.equal(v4.connections, 0);
    assert.equal(v6.connections, 0);
  });

  test('the connect-time check alone stops a name that resolves to loopback (real connect step)', async () => {
    const system = httpSystem('target', `http://internal.example.test:${v4.port}`);
    const dns = fakeDns({ 'internal.example.test': ['127.0.0.1'] });
    const client = new RestClient(system, { lookup: dns });
    assert.equal(await code(client.send(buildRequest(system, { path: '/json' }, undefined), never)), 'SSRF_BLOCKED');
    await client.close();
    assert.deepEqual(dns.asked, ['internal.example.test']);
    assert.equal(v4.connections, 0);
  });

  test('control: with allowPrivate the same listeners are reached, so the zero counts above mean something', async () => {
    for (const baseUrl of [forms()[1]!, forms()[5]!]) {
      const system = httpSystem('target', baseUrl, { allowPrivate: true });
      const client = new RestClient(system);
      const res = await client.send(buildRequest(system, { path: '/json' }, undefined), never);
      assert.deepEqual(res.body, { ok: true, n: 42 });
      await client.close();
    }
    assert.equal(v4.connections, 1);
    assert.equal(v6.connections, 1);
  });
});

describe('through the client with an injected lookup and a recording, refusing connect hook', () => {
  const dns = fakeDns({
    'loopback.example.test': ['127.0.0.1'],
    'loopback6.example.test': ['::1'],
    'mapped.example.test': ['::ffff:127.0.0.1'],
    'private.example.test': ['10.0.0.1'],
    'metadata.example.test': ['169.254.169.254'],
    'mixed.example.test': ['93.184.216.34', '192.168.1.1'],
    'public.example.test': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
  });

  const send = (url: string, hook: ConnectFn, over = {}): Promise<string> => {
    const system = httpSystem('target', url, over);
    const client = new RestClient(system, { lookup: dns, connect: hook });
    return code(client.send(buildRequest(system, {}, undefined), never).finally(() => client.close()));
  };

  const blockedLiterals = [
    'http://10.0.0.1/',
    'http://192.168.1.1/',
    'http://169.254.169.254/latest/meta-data/',
    'http://[fd00::1]/',
    'http://[fe80::1]/',
    'http://100.64.0.1/',
    'http://0.0.0.0/',
  ];
  for (const url of blockedLiterals) {
    test(`${url} is refused before any lookup or connect`, async () => {
      const hook = refusingHook();
      const asked = dns.asked.length;
      assert.equal(await send(url, hook), 'SSRF_BLOCKED');
      assert.deepEqual(hook.seen, []);
      assert.equal(dns.asked.length, asked);
    });
  }

  for (const name of ['loopback', 'loopback6', 'mapped', 'private', 'metadata', 'mixed']) {
    test(`a name resolving to ${name} addresses is refused at connect time; the hook sees nothing`, async () => {
      const hook = refusingHook();
      assert.equal(await send(`https://${name}.example.test/`, hook), 'SSRF_BLOCKED');
      assert.deepEqual(hook.seen, []);
      assert.ok(dns.asked.includes(`${name}.example.test`));
    });
  }

  test('the metadata address stays refused with allowPrivate', async () => {
    const hook = refusingHook();
    assert.equal(await send('http://metadata.example.test/', hook, { allowPrivate: true }), 'SSRF_BLOCKED');
    assert.equal(await send('http://169.254.169.254/', hook, { allowPrivate: true }), 'SSRF_BLOCKED');
    assert.deepEqual(hook.seen, []);
  });

  test('a public name reaches the hook with the checked address, the TLS name and the port', async () => {
    const hook = refusingHook();
    assert.equal(await send('https://public.example.test:8443/', hook), 'UPSTREAM_ERROR');
    // the hook refused the first address, so the client tried the second checked one
    assert.deepEqual(
      hook.seen.map((t) => [t.address, t.family, t.port, t.protocol, t.hostname]),
      [
        ['93.184.216.34', 4, 8443, 'https:', 'public.example.test'],
        ['2606:2800:220:1:248:1893:25c8:1946', 6, 8443, 'https:', 'public.example.test'],
      ],
    );
  });

  test('file:// is refused before any lookup or connect', async () => {
    const hook = refusingHook();
    const system = httpSystem('target', 'http://public.example.test/');
    const client = new RestClient(system, { lookup: dns, connect: hook });
    const request: RestRequest = { method: 'GET', url: new URL('file:///etc/passwd'), headers: {} };
    assert.equal(await code(client.send(request, never)), 'SSRF_BLOCKED');
    await client.close();
    assert.deepEqual(hook.seen, []);
  });

  test('DNS rebinding: every connection resolves once and connects to exactly what was checked', async () => {
    let answer = '93.184.216.34';
    let lookups = 0;
    const rebinding: LookupFn = async () => {
      lookups++;
      return [{ address: answer, family: 4 }];
    };
    const hook = refusingHook();
    const system = httpSystem('target', 'http://rebind.example.test/');
    const client = new RestClient(system, { lookup: rebinding, connect: hook });
    assert.equal(await code(client.send(buildRequest(system, {}, undefined), never)), 'UPSTREAM_ERROR');
    answer = '127.0.0.1'; // the name now points inside
    assert.equal(await code(client.send(buildRequest(system, {}, undefined), never)), 'SSRF_BLOCKED');
    await client.close();
    assert.equal(lookups, 2);
    assert.deepEqual(
      hook.seen.map((t) => t.address),
      ['93.184.216.34'],
    );
  });
});

describe('guardedConnector on its own', () => {
  const run = (hostname: string, lookup: LookupFn, hook: ConnectFn, allowPrivate = false) =>
    new Promise<Error | null>((resolve) => {
      const connector = guardedConnector({ policy: { allowPrivate }, lookup, connect: hook });
      connector({ hostname, protocol: 'http:', port: '80' }, (err, socket) => {
        socket?.destroy();
        resolve(err);
      });
    });

  test('literal private, link-local and metadata hosts are refused without a lookup or a connect', async () => {
    for (const host of ['10.0.0.1', '192.168.1.1', '169.254.169.254', 'fd00::1', '127.0.0.1', '::1', '::ffff:7f00:1']) {
      const hook = refusingHook();
      const dns = fakeDns({});
      const err = await run(host, dns, hook);
      assert.equal((err as SagawayError | null)?.code, 'SSRF_BLOCKED', host);
      assert.deepEqual(hook.seen, []);
      assert.deepEqual(dns.asked, []);
    }
  });

  test('allowPrivate lets a private address through to the hook', async () => {
    const hook = refusingHook();
    const err = await run('10.0.0.1', fakeDns({}), hook, true);
    assert.equal((err as { code?: string } | null)?.code, 'ECONNREFUSED');
    assert.deepEqual(
      hook.seen.map((t) => t.address),
      ['10.0.0.1'],
    );
  });

  test('a name with no addresses fails without connecting', async () => {
    const hook = refusingHook();
    const err = await run('nothing.example.test', async () => [], hook);
    assert.equal((err as { code?: string } | null)?.code, 'ENOTFOUND');
    assert.deepEqual(hook.seen, []);
  });
});

describe('redirects to loopback, with the first hop served by a loopback server behind a hook', () => {
  let server: LoopbackServer;
  before(async () => {
    server = await startLoopback();
  });
  after(async () => server.close());

  const dns = fakeDns({ 'api.example.test': ['93.184.216.34'], 'internal.example.test': ['127.0.0.1'] });

  async function followTo(location: string): Promise<{ code: string; hook: ConnectTarget[]; requests: string[] }> {
    const hook = loopbackHook(server.port);
    const system = httpSystem('api', 'http://api.example.test/', { followRedirects: true });
    const client = new RestClient(system, { lookup: dns, connect: hook });
    const before = server.requests.length;
    const result = await code(
      client.send(buildRequest(system, { path: '/redirect', query: { to: location } }, undefined), never),
    );
    await client.close();
    return { code: result, hook: hook.seen, requests: server.requests.slice(before).map((r) => r.url) };
  }

  test('control: a redirect to the same public name is followed', async () => {
    const r = await followTo('/json');
    assert.equal(r.code, 'OK');
    assert.deepEqual(r.requests, ['/redirect?to=%2Fjson', '/json']);
  });

  const targets = (port: number): string[] => [
    `http://127.0.0.1:${port}/secret`,
    `http://127.1:${port}/secret`,
    `http://[::ffff:127.0.0.1]:${port}/secret`,
    `http://[::1]:${port}/secret`,
    `http://internal.example.test:${port}/secret`,
    'http://169.254.169.254/latest/meta-data/',
    'file:///etc/passwd',
  ];
  test('a redirect to a loopback, metadata or file: target fails SSRF_BLOCKED and only the first hop is connected', async () => {
    for (const location of targets(server.port)) {
      const r = await followTo(location);
      assert.equal(r.code, 'SSRF_BLOCKED', location);
      assert.deepEqual(
        r.hook.map((t) => t.address),
        ['93.184.216.34'],
        location,
      );
      assert.equal(r.requests.length, 1, location);
      assert.ok(r.requests[0]?.startsWith('/redirect?'), location);
    }
  });

  test('without followRedirects the redirect target is never looked up', async () => {
    const hook = loopbackHook(server.port);
    const dns2 = fakeDns({ 'api.example.test': ['93.184.216.34'], 'internal.example.test': ['127.0.0.1'] });
    const system = httpSystem('api', 'http://api.example.test/');
    const client = new RestClient(system, { lookup: dns2, connect: hook });
    const result = await code(
      client.send(
        buildRequest(system, { path: '/redirect', query: { to: 'http://internal.example.test/' } }, undefined),
        never,
      ),
    );
    await client.close();
    assert.equal(result, 'UPSTREAM_ERROR');
    assert.deepEqual(dns2.asked, ['api.example.test']);
  });
});
