import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, SignJWT, UnsecuredJWT } from 'jose';
import type { JwtSettings } from '../../src/config/settings.js';
import { createGateway, type Gateway } from '../../src/gateway/server.js';
import { silentLogger } from '../../src/core/logger.js';
import { ok, ScriptedService, settingsWith, startGateway } from './harness.js';

const SECRET = 'a-test-secret-of-at-least-32-bytes!!';
const ISS = 'https://auth.test';
const AUD = 'todo-api';
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const rsaPem = rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString();
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const ed = generateKeyPairSync('ed25519');
const API_KEY = 'ci-bot-key-123';

const apis = [
  { path: '/todos', runner: 'todo', roles: ['user'], public: false },
  { path: '/admin', runner: 'todo', roles: ['admin'], public: false },
  { path: '/open', runner: 'todo', roles: [], public: true },
];

function jwtSettings(over: Partial<JwtSettings> = {}): JwtSettings {
  return {
    secret: SECRET,
    algorithms: ['HS256'],
    issuer: ISS,
    audience: AUD,
    rolesClaim: 'realm.roles',
    principalClaim: 'sub',
    clockToleranceMs: 5000,
    ...over,
  };
}

const now = () => Math.floor(Date.now() / 1000);

function sign(
  claims: Record<string, unknown> = {},
  opts: { alg?: string; key?: unknown; exp?: number | null; iss?: string; aud?: string } = {},
) {
  const jwt = new SignJWT({ realm: { roles: ['user'] }, ...claims })
    .setProtectedHeader({ alg: opts.alg ?? 'HS256' })
    .setSubject('alice')
    .setIssuer(opts.iss ?? ISS)
    .setAudience(opts.aud ?? AUD)
    .setIssuedAt();
  if (opts.exp !== null) jwt.setExpirationTime(opts.exp ?? now() + 600);
  return jwt.sign((opts.key ?? new TextEncoder().encode(SECRET)) as Uint8Array);
}

function serviceEchoingUser() {
  return new ScriptedService((req) => ok({ user: req.user, list: [{ sub: req.user?.sub }] }));
}

async function build(
  jwt: JwtSettings,
  extra: { queryToken?: boolean } = {},
): Promise<{ gw: Gateway; svc: ScriptedService }> {
  const svc = serviceEchoingUser();
  const settings = settingsWith({
    apis,
    auth: {
      jwt,
      apiKeys: [
        { name: 'ci-bot', sha256: createHash('sha256').update(API_KEY).digest('hex'), roles: ['admin', 'user'] },
      ],
      ...(extra.queryToken === undefined ? {} : { queryToken: extra.queryToken }),
    },
  });
  return { gw: await createGateway({ settings, service: svc, log: silentLogger() }), svc };
}

/** The bad-token matrix: each must be a 401 with no detail. */
async function badTokens(): Promise<Array<[string, string]>> {
  const otherSecret = new TextEncoder().encode('another-secret-another-secret-xx');
  return [
    [
      'alg none',
      new UnsecuredJWT({ sub: 'alice', realm: { roles: ['user'] } })
        .setIssuer(ISS)
        .setAudience(AUD)
        .setExpirationTime('10m')
        .encode(),
    ],
    ['wrong key', await sign({}, { key: otherSecret })],
    ['unpinned algorithm HS512', await sign({}, { alg: 'HS512', key: new TextEncoder().encode(SECRET + SECRET) })],
    ['expired', await sign({}, { exp: now() - 60 })],
    ['not yet valid', await sign({ nbf: now() + 3600 })],
    ['wrong audience', await sign({}, { aud: 'other-api' })],
    ['wrong issuer', await sign({}, { iss: 'https://evil.test' })],
    ['missing exp', await sign({}, { exp: null })],
    ['garbage', 'not.a.jwt'],
    ['empty parts', '..'],
  ];
}

/**
 * The reasons a 401 may give (issue 24 item 7: what form of credential was expected). One fixed
 * sentence per kind of mistake, never the verifier's reason (expired, audience, signature) nor
 * anything of the credential: every bad token gets the same one.
 */
const REASONS_401 = new Set([
  'authentication required',
  'the Authorization header must be `Bearer <token>`',
  'the X-API-Key header is empty, repeated or too long',
  'the credential is empty or too long',
  "the API key is not one of this gateway's",
  'this gateway takes no bearer tokens (gateway.auth.jwt is not set)',
  'the bearer token was not accepted (not valid, expired, or not for this gateway)',
]);

function assertBare401(r: { statusCode: number; body: string; headers: Record<string, unknown> }, what: string) {
  assert.equal(r.statusCode, 401, what);
  const body = JSON.parse(r.body) as Record<string, unknown>;
  assert.equal(body['code'], 'UNAUTHORIZED', what);
  const [why, accepted] = String(body['detail']).split('; accepted: ');
  assert.ok(REASONS_401.has(why!), `${what}: a fixed reason, not the verifier's: ${why}`);
  assert.match(accepted ?? '', /Authorization: Bearer <token>|X-API-Key/, `${what}: the forms accepted`);
  assert.doesNotMatch(why!, /aud|iss|alg|signature|claim/i, what);
  assert.equal(r.headers['www-authenticate'], 'Bearer realm="sagaway"');
}

test('auth matrix (one-shot form): bad tokens are 401 with a fixed reason, a missing role is 403', async () => {
  const { gw, svc } = await build(jwtSettings());
  for (const [what, token] of await badTokens()) {
    assertBare401(
      await gw.app.inject({ url: '/api/request/todos', headers: { authorization: `Bearer ${token}` } }),
      what,
    );
    assertBare401(
      await gw.app.inject({ url: '/api/request/todos', headers: { cookie: `sagaway_token=${token}` } }),
      `${what} (cookie)`,
    );
  }
  assertBare401(await gw.app.inject({ url: '/api/request/todos' }), 'no credential');
  assertBare401(await gw.app.inject({ url: '/api/request/todos', headers: { authorization: 'Basic YTpi' } }), 'basic');
  assertBare401(await gw.app.inject({ url: '/api/request/todos', headers: { 'x-api-key': 'wrong' } }), 'wrong api key');
  // A credential that is presented must be valid, even on a public API.
  assertBare401(
    await gw.app.inject({ url: '/api/request/open', headers: { authorization: 'Bearer junk' } }),
    'public + junk',
  );
  assert.equal(svc.calls.length, 0);

  const good = await sign();
  let r = await gw.app.inject({ url: '/api/request/todos', headers: { authorization: `Bearer ${good}` } });
  assert.equal(r.statusCode, 200);
  const user = r.json().user;
  assert.deepEqual([user.sub, user.roles, user.anonymous], ['alice', ['user'], false]);
  assert.equal(user.claims.iss, ISS);
  r = await gw.app.inject({ url: '/api/request/todos', headers: { cookie: `other=1; sagaway_token=${good}` } });
  assert.equal(r.statusCode, 200);
  r = await gw.app.inject({ url: '/api/request/admin', headers: { authorization: `Bearer ${good}` } });
  assert.equal(r.statusCode, 403);
  assert.equal(r.json().code, 'FORBIDDEN');
  r = await gw.app.inject({ url: '/api/request/admin', headers: { 'x-api-key': API_KEY } });
  assert.equal(r.statusCode, 200);
  assert.deepEqual(r.json().user, {
    sub: 'apikey:ci-bot',
    roles: ['admin', 'user'],
    claims: {},
    anonymous: false,
    kind: 'apikey',
  });
  r = await gw.app.inject({ url: '/api/request/open' });
  assert.equal(r.statusCode, 200);
  assert.equal(r.json().user.anonymous, true);
  // A token within the clock tolerance is still accepted.
  r = await gw.app.inject({
    url: '/api/request/todos',
    headers: { authorization: `Bearer ${await sign({}, { exp: now() - 2 })}` },
  });
  assert.equal(r.statusCode, 200);
  // The access_token query parameter is never read by the one-shot form.
  assertBare401(await gw.app.inject({ url: `/api/request/todos?access_token=${good}` }), 'query token on one-shot');
  await gw.close();
});

test('HS/RS confusion: an RS256 gateway refuses HS256 tokens signed with its public key', async () => {
  const { gw } = await build(jwtSettings({ secret: undefined, publicKey: rsaPem, algorithms: ['RS256'] }));
  const confused = await sign({}, { alg: 'HS256', key: new TextEncoder().encode(rsaPem) });
  assertBare401(
    await gw.app.inject({ url: '/api/request/todos', headers: { authorization: `Bearer ${confused}` } }),
    'confusion',
  );
  const hs = await sign();
  assertBare401(
    await gw.app.inject({ url: '/api/request/todos', headers: { authorization: `Bearer ${hs}` } }),
    'plain HS256',
  );
  const rs = await sign({}, { alg: 'RS256', key: rsa.privateKey });
  assert.equal(
    (await gw.app.inject({ url: '/api/request/todos', headers: { authorization: `Bearer ${rs}` } })).statusCode,
    200,
  );
  const rs384 = await sign({}, { alg: 'RS384', key: rsa.privateKey });
  assertBare401(
    await gw.app.inject({ url: '/api/request/todos', headers: { authorization: `Bearer ${rs384}` } }),
    'unpinned RS384',
  );
  await gw.close();
});

test('ES256 and EdDSA public keys, and RS256 from a JWKS URL', async () => {
  const ecPem = ec.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const { gw } = await build(jwtSettings({ secret: undefined, publicKey: ecPem, algorithms: ['ES256'] }));
  const es = await sign({}, { alg: 'ES256', key: ec.privateKey });
  assert.equal(
    (await gw.app.inject({ url: '/api/request/todos', headers: { authorization: `Bearer ${es}` } })).statusCode,
    200,
  );
  await gw.close();

  const edPem = ed.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const { gw: gw2 } = await build(jwtSettings({ secret: undefined, publicKey: edPem, algorithms: ['EdDSA'] }));
  const eddsa = await sign({}, { alg: 'EdDSA', key: ed.privateKey });
  assert.equal(
    (await gw2.app.inject({ url: '/api/request/todos', headers: { authorization: `Bearer ${eddsa}` } })).statusCode,
    200,
  );
  await gw2.close();

  let fetches = 0;
  const jwk = { ...(await exportJWK(rsa.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const jwks = createServer((_req, res) => {
    fetches++;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`;
  const { gw: gw3 } = await build(jwtSettings({ secret: undefined, jwksUrl: url, algorithms: ['RS256'] }));
  const signKid = (key: unknown) =>
    new SignJWT({ realm: { roles: ['user'] } })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setSubject('bob')
      .setIssuer(ISS)
      .setAudience(AUD)
      .setExpirationTime('5m')
      .sign(key as Uint8Array);
  for (let i = 0; i < 3; i++) {
    const r = await gw3.app.inject({
      url: '/api/request/todos',
      headers: { authorization: `Bearer ${await signKid(rsa.privateKey)}` },
    });
    assert.equal(r.statusCode, 200);
  }
  assert.equal(fetches, 1, 'the JWKS is fetched once and cached');
  const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
  assertBare401(
    await gw3.app.inject({
      url: '/api/request/todos',
      headers: { authorization: `Bearer ${await signKid(other.privateKey)}` },
    }),
    'jwks wrong key',
  );
  await gw3.close();
  jwks.close();
});

test('auth matrix (stream form): the same refusals before any event; query token only when allowed', async () => {
  const svc = serviceEchoingUser();
  const jwt = jwtSettings();
  const auth = { jwt, apiKeys: [], queryToken: true };
  const { base, close } = await startGateway(svc, { apis, auth });
  const get = async (path: string, headers: Record<string, string> = {}) => {
    const res = await fetch(base + path, { headers });
    return { statusCode: res.status, headers: Object.fromEntries(res.headers), body: await res.text() };
  };
  for (const [what, token] of await badTokens()) {
    assertBare401(await get('/api/stream/todos', { authorization: `Bearer ${token}` }), `stream ${what}`);
    assertBare401(await get(`/api/stream/todos?access_token=${encodeURIComponent(token)}`), `stream ${what} (query)`);
  }
  assertBare401(await get('/api/stream/todos'), 'stream without credential');
  assert.equal(svc.calls.length, 0);
  const good = await sign();
  const forbidden = await get('/api/stream/admin', { authorization: `Bearer ${good}` });
  assert.equal(forbidden.statusCode, 403);
  assert.equal(JSON.parse(forbidden.body).code, 'FORBIDDEN');
  const viaCookie = await get('/api/stream/todos', { cookie: `sagaway_token=${good}` });
  assert.equal(viaCookie.statusCode, 200);
  assert.match(viaCookie.body, /data: {"sub":"alice"}/);
  const ok1 = await get(`/api/stream/todos?access_token=${good}&x=1`);
  assert.equal(ok1.statusCode, 200);
  assert.match(ok1.body, /data: {"sub":"alice"}/);
  // The token never reaches the saga's INPUT or query.
  assert.deepEqual(svc.calls.at(-1)!.req.input, { x: '1' });
  assert.deepEqual(svc.calls.at(-1)!.req.query, { x: '1' });
  await close();

  const { base: base2, close: close2 } = await startGateway(serviceEchoingUser(), { apis, auth: { jwt, apiKeys: [] } });
  const res = await fetch(`${base2}/api/stream/todos?access_token=${good}`);
  assert.equal(res.status, 401, 'queryToken is off by default');
  await res.text();
  await close2();
});

test('a token that expires while streaming ends the stream with event: error UNAUTHORIZED', async () => {
  const svc = new ScriptedService(() => ok({ list: [{ t: Date.now() }], continue: true, wait: 100 }));
  const { base, close } = await startGateway(svc, {
    apis,
    auth: { jwt: jwtSettings({ clockToleranceMs: 0 }), apiKeys: [] },
  });
  const token = await sign({}, { exp: now() + 2 });
  const started = Date.now();
  const res = await fetch(base + '/api/stream/todos', { headers: { authorization: `Bearer ${token}` } });
  assert.equal(res.status, 200);
  const text = await res.text();
  assert.ok(Date.now() - started < 6000);
  const blocks = text.split('\n\n').filter((b) => b !== '');
  const last = blocks.at(-1)!;
  // UNAUTHORIZED is not retryable: the error carries the final token, so a reconnect stops (204).
  assert.match(last, /^event: error\nid: [\w-]+\.e\.[\w-]+\ndata: /);
  const problem = JSON.parse(last.split('data: ')[1]!);
  assert.equal(problem.code, 'UNAUTHORIZED');
  assert.equal(problem.status, 401);
  assert.ok(blocks.filter((b) => b.startsWith('id: ')).length >= 3, 'entries were sent while the token was valid');
  await close();
});
