import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT } from 'jose';
import { hasNginx, NGINX, startNginx } from '../../src/testing/nginx.js';
import { needs } from '../require-services.js';
import { delay, ok, ScriptedService, startGateway } from './harness.js';
import { follow } from './long-poll-client.js';
import { range } from './sse-client.js';

/**
 * The long-poll form through a real cache (issue 25, item 3): nginx with proxy_cache and
 * proxy_cache_lock in front of the gateway. 500 clients on one public feed cost about one saga
 * run per poll interval at the gateway, and each gets every entry once, in order; a private
 * feed's client is never served another's entry from the cache.
 */

const skip = needs(hasNginx() ? undefined : `${NGINX} is missing (apt-get install nginx)`);

test(
  '500 long-poll clients through nginx: about one saga run per wait, every entry once and in order',
  { skip },
  async () => {
    const WAIT = 1000;
    const TOTAL = 20;
    let length = 0;
    let closed = false;
    const svc = new ScriptedService((req) => {
      const from = typeof req.input['previous'] === 'number' ? req.input['previous'] : 0;
      const list = range(from, length).map((n) => ({ n }));
      return ok({ list, next: length, continue: !(closed && from + list.length >= length), wait: WAIT });
    });
    const { gw, base, close } = await startGateway(svc, {
      apis: [{ path: '/', runner: 'main', roles: [], public: true, stream: { share: 'all' } }],
      stream: { minWaitMs: 10, maxPerClient: 10_000, maxStreams: 10_000 },
    });
    const port = Number(new URL(base).port);
    const nginx = await startNginx(port, { connections: 2048 });
    try {
      const url = `http://127.0.0.1:${nginx.port}/api/stream/feed`;
      const t0 = Date.now();
      const clients = range(0, 500).map(() => follow(url, { deadline: Date.now() + 90_000 }));
      // an entry every 200 ms, then the end
      for (let i = 0; i < TOTAL; i++) {
        await delay(200);
        length++;
      }
      closed = true;
      const all = await Promise.all(clients);
      const seconds = (Date.now() - t0) / 1000;
      const runs = svc.calls.length;
      // long-poll requests the gateway answered
      const gatewayRequests = gw.metrics.memberPolls.value;
      const requests = all.reduce((n, c) => n + c.requests, 0);
      const hits = all.reduce((n, c) => n + (c.cache['HIT'] ?? 0) + (c.cache['UPDATING'] ?? 0), 0);
      for (const [i, got] of all.entries()) {
        assert.deepEqual(
          got.entries.map((e) => (e as { n: number }).n),
          range(0, TOTAL),
          `client ${i}: every entry once, in order`,
        );
        assert.ok(got.end, `client ${i} saw the end`);
      }
      const note = `${seconds.toFixed(1)} s, ${runs} saga runs, ${gatewayRequests} requests at the gateway, ${requests} client requests (${hits} from the cache)`;
      // about one run per wait (plus the first poll, the end, and a second for a poll boundary)
      assert.ok(runs <= Math.ceil(seconds / (WAIT / 1000)) + 3, `runs per wait: ${note}`);
      assert.ok(gatewayRequests <= 3 * runs + 10, `requests reaching the gateway: ${note}`);
      assert.ok(requests >= 500 * 3, `the clients long-polled: ${note}`);
      console.log(`# ${note}`);
    } catch (err) {
      console.log(await nginx.errors());
      throw err;
    } finally {
      await nginx.stop();
      await close();
    }
  },
);

const SECRET = 'a-secret-of-at-least-32-bytes-for-hs256!';
function token(sub: string): Promise<string> {
  return new SignJWT({ roles: ['user'] })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + 600)
    .sign(new TextEncoder().encode(SECRET));
}

test(
  "private feeds through nginx: no client is ever served another caller's entry from the cache",
  { skip },
  async () => {
    let length = 0;
    let closed = false;
    const svc = new ScriptedService((req) => {
      const from = typeof req.input['previous'] === 'number' ? req.input['previous'] : 0;
      const list = range(from, length).map((n) => ({ n, who: req.user?.sub }));
      return ok({ list, next: length, continue: !(closed && from + list.length >= length), wait: 300 });
    });
    const { base, close } = await startGateway(svc, {
      auth: {
        jwt: { secret: SECRET, algorithms: ['HS256'], rolesClaim: 'roles', principalClaim: 'sub', clockToleranceMs: 0 },
      },
      apis: [{ path: '/', runner: 'main', roles: ['user'], public: false, stream: { share: 'caller' } }],
      stream: { minWaitMs: 10, maxPerClient: 1000 },
    });
    const nginx = await startNginx(Number(new URL(base).port));
    try {
      const url = `http://127.0.0.1:${nginx.port}/api/stream/feed`;
      const users = ['ann', 'bob', 'cat', 'dan'];
      const tokens = await Promise.all(users.map((u) => token(u)));
      // five clients per user on the very same URLs (the first one has no offset at all)
      const clients = users.flatMap((u, i) =>
        range(0, 5).map(() =>
          follow(url, { headers: { authorization: `Bearer ${tokens[i]}` }, deadline: Date.now() + 60_000 }).then(
            (got) => ({ u, got }),
          ),
        ),
      );
      for (let i = 0; i < 10; i++) {
        await delay(100);
        length++;
      }
      closed = true;
      for (const { u, got } of await Promise.all(clients)) {
        assert.deepEqual(
          got.entries.map((e) => (e as { n: number }).n),
          range(0, 10),
        );
        for (const e of got.entries) assert.equal((e as { who: string }).who, u, `${u} got only ${u}'s entries`);
        assert.equal(got.cache['HIT'] ?? 0, 0, 'nothing private came from the cache');
      }
    } finally {
      await nginx.stop();
      await close();
    }
  },
);
