import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { loadConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/core/logger.js';
import { createGateway } from '../../src/gateway/server.js';
import { BUILTIN_HANDLERS } from '../../src/handlers/index.js';
import { Host } from '../../src/runner/host.js';
import { createState } from '../../src/states/index.js';
import { createCluster } from '../../src/systems/index.js';
import { sagaway } from './spawn.js';

/** `sagaway token`: a development JWT that the configured gateway accepts, only from an HS secret. */

const dir = mkdtempSync(join(tmpdir(), 'sagaway-token-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const SECRET = `dev-secret-${process.pid}-0123456789abcdef-0123456789`;

const config = (auth: string) => `gateway:
  auth: ${auth}
  apis:
    - { path: /me, runner: app, roles: [user] }
runners:
  app:
    sagas:
      - id: me
        path: /me
        steps:
          - { id: start, type: start, links: [{ to: who }] }
          - { id: who, type: transform, expression: '{ "sub": $user.sub, "roles": $user.roles }', links: [{ to: done }] }
          - { id: done, type: success }
`;
const file = join(dir, 'hs.yaml');
writeFileSync(
  file,
  config(
    `{ jwt: { secret: "\${env:TOKEN_TEST_SECRET}", algorithms: [HS384], issuer: https://id.example, audience: notes, rolesClaim: realm.roles } }`,
  ),
);
const env = { TOKEN_TEST_SECRET: SECRET };

describe('sagaway token', () => {
  test('mints a token that the gateway accepts, with the roles where rolesClaim says', async () => {
    const r = sagaway(['token', '--config', file, '--sub', 'alice', '--roles', 'user,admin', '--ttl', '15m'], env);
    assert.equal(r.status, 0, r.stderr);
    const token = r.stdout.trim();
    assert.ok(!r.stdout.includes(SECRET) && !r.stderr.includes(SECRET), 'the secret is never printed');
    assert.equal(decodeProtectedHeader(token).alg, 'HS384');
    const claims = decodeJwt(token);
    assert.equal(claims.sub, 'alice');
    assert.equal(claims.iss, 'https://id.example');
    assert.equal(claims.aud, 'notes');
    assert.deepEqual(claims['realm'], { roles: ['user', 'admin'] });
    const lifetime = claims.exp! - claims.iat!;
    assert.ok(lifetime >= 899 && lifetime <= 901, `exp is 15 minutes after iat (${lifetime})`);

    const { settings } = await loadConfig(file, { env: { ...process.env, ...env } });
    const log = silentLogger();
    const host = await Host.start({ settings, log, builtins: BUILTIN_HANDLERS, createState, createCluster });
    const gateway = await createGateway({ settings, service: host, log });
    try {
      const ok = await gateway.app.inject({ url: '/api/request/me', headers: { authorization: `Bearer ${token}` } });
      assert.equal(ok.statusCode, 200, ok.body);
      assert.deepEqual(ok.json(), { sub: 'alice', roles: ['user', 'admin'] });
      assert.equal((await gateway.app.inject({ url: '/api/request/me' })).statusCode, 401);
      // A token without the API's role is refused: the roles are really checked.
      const guest = sagaway(['token', '--config', file, '--sub', 'bob', '--roles', 'guest'], env).stdout.trim();
      const forbidden = await gateway.app.inject({
        url: '/api/request/me',
        headers: { authorization: `Bearer ${guest}` },
      });
      assert.equal(forbidden.statusCode, 403);
    } finally {
      await gateway.close();
      await host.close();
    }
  });

  test('refused when no HS secret is configured (none, or a public key only)', () => {
    const none = join(dir, 'none.yaml');
    writeFileSync(none, config('{}').replace('roles: [user]', 'public: true'));
    const r = sagaway(['token', '--config', none, '--sub', 'alice']);
    assert.equal(r.status, 2);
    assert.equal(r.stdout, '', 'no token printed');
    assert.match(r.stderr, /no HS secret is configured \(gateway\.auth\.jwt\.secret/);

    const pem = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'pem' });
    const pk = join(dir, 'pk.yaml');
    writeFileSync(pk, config(`{ jwt: { publicKey: ${JSON.stringify(pem)} } }`));
    const r2 = sagaway(['token', '--config', pk, '--sub', 'alice']);
    assert.equal(r2.status, 2, r2.stderr);
    assert.equal(r2.stdout, '');
    assert.match(r2.stderr, /no HS secret is configured/);
  });

  test('a secret shorter than 32 bytes: refused with the place in the file, no token, the secret never printed', () => {
    const weak = 'only-31-bytes-of-secret-0123456';
    assert.equal(Buffer.byteLength(weak), 31);
    const r = sagaway(['token', '--config', file, '--sub', 'alice'], { TOKEN_TEST_SECRET: weak });
    assert.notEqual(r.status, 0);
    assert.equal(r.stdout, '', 'no token printed');
    assert.match(
      r.stderr,
      /hs\.yaml:2:\d+ gateway\.auth\.jwt\.secret: the secret has 31 bytes; HS256\/384\/512 needs at least 32/,
    );
    assert.ok(!r.stderr.includes(weak), 'the secret is never printed');
    // 32 bytes, counted in UTF-8 bytes (16 two-byte characters), are enough.
    const ok = sagaway(['token', '--config', file, '--sub', 'alice'], { TOKEN_TEST_SECRET: 'é'.repeat(16) });
    assert.equal(ok.status, 0, ok.stderr);
  });

  test('--sub is required; --ttl is bounded', () => {
    assert.match(sagaway(['token', '--config', file], env).stderr, /token needs --sub/);
    assert.match(sagaway(['token', '--config', file, '--sub', 'a', '--ttl', '9999h'], env).stderr, /--ttl must be/);
  });
});
