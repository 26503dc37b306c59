import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { exportJWK, SignJWT } from 'jose';
import { ok, ScriptedService, startGateway } from './harness.js';

/**
 * The merged onRequest hook (forms/admit.ts + rate-limit.ts, issue 23) calls the rate limit and
 * the JSON check from admit's own continuation. A JWT's decision is a promise, so for a JWT
 * request they run inside `decision.then(finish, done)`, no longer inside fastify's hook runner
 * (which catches what a hook throws). A client that hangs up while its token is checked leaves
 * a destroyed socket whose remoteAddress is undefined: `request.ip.includes` throws there, and
 * the rejection of that `then` is not handled (Node 20: the process exits). The refused token's
 * path (rate.refused, called from the same `finish`) had the same hole before issue 23.
 */
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const other = generateKeyPairSync('rsa', { modulusLength: 2048 });

for (const [what, key] of [
  ['an accepted token', rsa.privateKey],
  ['a refused token (rate.refused)', other.privateKey],
] as const)
  test(`a JWT client that hangs up while its token is verified leaves no unhandled rejection: ${what}`, async () => {
    const jwk = { ...(await exportJWK(rsa.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
    // a slow JWKS: the token's check takes 300 ms
    const jwks = createServer((_req, res) => {
      setTimeout(() => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ keys: [jwk] }));
      }, 300);
    });
    await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`;
    const token = await new SignJWT({ realm: { roles: ['user'] } })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setSubject('bob')
      .setIssuer('https://auth.test')
      .setAudience('todo-api')
      .setExpirationTime('5m')
      .sign(key);

    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    // node:test's own listener would fail the file; this one records instead
    const listeners = process.listeners('unhandledRejection');
    process.removeAllListeners('unhandledRejection');
    process.on('unhandledRejection', onUnhandled);
    const svc = new ScriptedService(() => ok({ done: true }));
    const { base, close } = await startGateway(svc, {
      apis: [{ path: '/todos', runner: 'todo', roles: ['user'], public: false }],
      auth: {
        jwt: {
          jwksUrl: url,
          algorithms: ['RS256'],
          issuer: 'https://auth.test',
          audience: 'todo-api',
          rolesClaim: 'realm.roles',
          principalClaim: 'sub',
          clockToleranceMs: 5000,
        },
        apiKeys: [],
      },
      limits: { rate: { max: 100, windowMs: 60_000 } },
    });
    try {
      const port = Number(new URL(base).port);
      const socket = connect(port, '127.0.0.1');
      await new Promise<void>((r) => socket.once('connect', () => r()));
      socket.write(`GET /api/request/todos HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`);
      await new Promise((r) => setTimeout(r, 100));
      socket.destroy(); // gone before the JWKS answers
      await new Promise((r) => setTimeout(r, 700));
      assert.deepEqual(
        unhandled.map((e) => String(e)),
        [],
      );
    } finally {
      process.off('unhandledRejection', onUnhandled);
      for (const l of listeners) process.on('unhandledRejection', l);
      await close();
      jwks.close();
    }
  });
