import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { SignJWT } from 'jose';
import { silentLogger } from '../../src/core/logger.js';
import { createGateway } from '../../src/gateway/server.js';
import { startTestHost } from '../../src/testing/index.js';
import { ok, ScriptedService, settingsWith } from './harness.js';

/**
 * Issue 24 item 7: a 401 says what form of credential the gateway expected, a 403 names the
 * roles that would do; neither says why a token failed verification, nor echoes a credential.
 */

const SECRET = 'a-test-secret-of-at-least-32-bytes!!';
const API_KEY = 'ci-bot-key-123';
const BOTH =
  'accepted: a JWT in `Authorization: Bearer <token>` (or the `sagaway_token` cookie), or an API key in the `X-API-Key` header';

async function gateway(auth: 'jwt+keys' | 'keys') {
  const svc = new ScriptedService(() => ok({ fine: true }));
  const settings = settingsWith({
    apis: [
      { path: '/todos', runner: 'todo', roles: ['user'], public: false },
      { path: '/admin', runner: 'todo', roles: ['admin', 'ops'], public: false },
    ],
    auth: {
      ...(auth === 'jwt+keys'
        ? {
            jwt: {
              secret: SECRET,
              algorithms: ['HS256'],
              rolesClaim: 'roles',
              principalClaim: 'sub',
              clockToleranceMs: 0,
            },
          }
        : {}),
      apiKeys: [{ name: 'bot', sha256: createHash('sha256').update(API_KEY).digest('hex'), roles: ['user'] }],
    },
  });
  return createGateway({ settings, service: svc, log: silentLogger() });
}

function token(roles: string[], exp = Math.floor(Date.now() / 1000) + 600) {
  return new SignJWT({ roles })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject('alice')
    .setExpirationTime(exp)
    .sign(new TextEncoder().encode(SECRET));
}

test('401: no credential, a token without `Bearer `, another scheme: each says the forms accepted', async () => {
  const gw = await gateway('jwt+keys');
  try {
    const good = await token(['user']);
    const cases: [string, Record<string, string>, string][] = [
      ['none', {}, `authentication required; ${BOTH}`],
      ['token without Bearer', { authorization: good }, `the Authorization header must be \`Bearer <token>\`; ${BOTH}`],
      ['Basic', { authorization: 'Basic YTpi' }, `the Authorization header must be \`Bearer <token>\`; ${BOTH}`],
      ['wrong key', { 'x-api-key': 'not-the-key' }, `the API key is not one of this gateway's; ${BOTH}`],
    ];
    for (const [what, headers, detail] of cases) {
      const r = await gw.app.inject({ url: '/api/request/todos', headers });
      assert.equal(r.statusCode, 401, what);
      assert.equal(r.json().detail, detail, what);
      assert.equal(r.headers['www-authenticate'], 'Bearer realm="sagaway"', what);
      for (const value of Object.values(headers))
        assert.ok(!r.body.includes(value), `${what}: the credential is not echoed`);
    }
  } finally {
    await gw.close();
  }
});

test('401: an expired and a forged token get one and the same reason (nothing about why)', async () => {
  const gw = await gateway('jwt+keys');
  try {
    const expired = await token(['user'], Math.floor(Date.now() / 1000) - 60);
    const forged = (await token(['user'])).slice(0, -4) + 'AAAA';
    const details = new Set<string>();
    for (const t of [expired, forged, 'garbage']) {
      const r = await gw.app.inject({ url: '/api/request/todos', headers: { authorization: `Bearer ${t}` } });
      assert.equal(r.statusCode, 401);
      assert.ok(!r.body.includes(t));
      details.add(r.json().detail);
    }
    assert.deepEqual(
      [...details],
      [`the bearer token was not accepted (not valid, expired, or not for this gateway); ${BOTH}`],
    );
  } finally {
    await gw.close();
  }
});

test('401 on a gateway with API keys only: a bearer token is not a form it takes', async () => {
  const gw = await gateway('keys');
  try {
    const r = await gw.app.inject({ url: '/api/request/todos', headers: { authorization: 'Bearer abc.def.ghi' } });
    assert.equal(r.statusCode, 401);
    assert.equal(
      r.json().detail,
      'this gateway takes no bearer tokens (gateway.auth.jwt is not set); accepted: an API key in the `X-API-Key` header',
    );
  } finally {
    await gw.close();
  }
});

test("403 names the roles that would do (API roles), not the caller's", async () => {
  const gw = await gateway('jwt+keys');
  try {
    const r = await gw.app.inject({
      url: '/api/request/admin',
      headers: { authorization: `Bearer ${await token(['user', 'secret-role'])}` },
    });
    assert.equal(r.statusCode, 403);
    assert.equal(r.json().detail, 'a required role is missing: this needs one of the roles admin, ops');
    assert.doesNotMatch(r.body, /secret-role/);
    const one = await gw.app.inject({
      url: '/api/request/todos',
      headers: { authorization: `Bearer ${await token(['viewer'])}` },
    });
    assert.equal(one.json().detail, 'a required role is missing: this needs the role user');
  } finally {
    await gw.close();
  }
});

test("a saga's own roles: 403 names them, and 401 for an anonymous caller says a role is needed (both forms)", async () => {
  const h = await startTestHost(`
gateway:
  apis: [{ path: /books, runner: lib, public: true }]
  stream: { defaultWait: 10ms, minWait: 10ms }
  auth: { apiKeys: [{ name: bot, sha256: ${createHash('sha256').update(API_KEY).digest('hex')}, roles: [reader] }] }
runners:
  lib:
    sagas:
      - id: books
        path: /books
        methods: [GET]
        roles: [librarian]
        steps:
          - { id: start, type: start, links: [{ to: done }] }
          - { id: done, type: success }
`);
  const gw = await createGateway({ settings: h.settings, service: h.host, log: silentLogger() });
  try {
    for (const form of ['request', 'stream']) {
      const keyed = await gw.app.inject({ url: `/api/${form}/books`, headers: { 'x-api-key': API_KEY } });
      assert.equal(keyed.statusCode, 403, form);
      assert.equal(keyed.json().detail, 'a required role is missing: this needs the role librarian', form);
      const anonymous = await gw.app.inject({ url: `/api/${form}/books` });
      assert.equal(anonymous.statusCode, 401, form);
      assert.equal(
        anonymous.json().detail,
        'authentication required: this needs a caller with the role librarian',
        form,
      );
    }
  } finally {
    await gw.close();
    await h.close();
  }
});
