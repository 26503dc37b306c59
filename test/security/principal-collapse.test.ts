import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { SignJWT } from 'jose';
import { silentLogger } from '../../src/core/logger.js';
import { createGateway, type Gateway } from '../../src/gateway/server.js';
import { startTestHost, type TestHost } from '../../src/testing/index.js';

/**
 * Issue 9 item 7: callers without a distinct identity collapsed into one. A JWT without `sub`
 * became the principal `jwt` (every such token one caller), and a token with `sub: "anonymous"`
 * shared the anonymous callers' cursor binding and status scope: user B read user A's run status
 * and replayed A's cursor. A JWT whose `sub` was `apikey:<name>` shared that API key's stream
 * slots.
 *
 * Over the real engine (a journaled runner, memory journal) behind the gateway on a socket.
 */

const SECRET = 'principal-collapse-secret-0123456789';
const KEY = 'ci-key-0123456789';

const CONFIG = `
gateway:
  apis:
    - { path: /note, runner: r, methods: [POST], public: true }
    - { path: /feed, runner: r, public: true }
    - { path: /live, runner: r, public: true }
  auth:
    jwt: { secret: ${SECRET} }
    apiKeys:
      - { name: ci, sha256: "${createHash('sha256').update(KEY).digest('hex')}", roles: [] }
  stream: { maxPerClient: 1, minWait: 10ms, heartbeat: 1s }
states:
  journal: { type: memory }
runners:
  r:
    handlers: []
    journal: journal
    sagas:
      - id: note
        path: /note
        methods: [POST]
        steps:
          - { id: start, type: start, links: [{ to: echo }] }
          - id: echo
            type: transform
            expression: '{ "who": $user.sub, "note": parameters.note }'
            links: [{ to: done }]
          - { id: done, type: success }
      - id: feed
        path: /feed
        methods: [GET]
        steps:
          - { id: start, type: start, links: [{ to: list }] }
          - id: list
            type: transform
            expression: '{ "list": [{ "n": 1 }, { "n": 2 }, { "n": 3 }] }'
            links: [{ to: done }]
          - { id: done, type: success }
      - id: live
        path: /live
        methods: [GET]
        steps:
          - { id: start, type: start, links: [{ to: list }] }
          - id: list
            type: transform
            expression: '{ "list": [], "continue": true, "wait": "1s" }'
            links: [{ to: done }]
          - { id: done, type: success }
`;

let h: TestHost;
let gw: Gateway;
let base: string;

before(async () => {
  h = await startTestHost(CONFIG);
  gw = await createGateway({
    settings: h.settings,
    service: h.host,
    log: silentLogger(),
    status: h.host.statusReader(),
  });
  const { port } = await gw.listen(0, '127.0.0.1');
  base = `http://127.0.0.1:${port}`;
});
after(async () => {
  await gw.close();
  await h.close();
});

async function token(claims: Record<string, unknown>): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime('10m')
    .sign(new TextEncoder().encode(SECRET));
}

const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

async function note(headers: Record<string, string>, text: string, correlation?: string) {
  const res = await fetch(`${base}/api/request/note`, {
    method: 'POST',
    headers: {
      ...headers,
      'content-type': 'application/json',
      ...(correlation ? { 'x-request-id': correlation } : {}),
    },
    body: JSON.stringify({ note: text }),
  });
  return { status: res.status, runId: res.headers.get('x-request-id') ?? '', body: (await res.json()) as never };
}

async function status(headers: Record<string, string>, id: string) {
  const res = await fetch(`${base}/api/status/${id}`, { headers });
  return { status: res.status, text: await res.text() };
}

/** Journal records (runs and correlation index entries) written so far. */
async function journalSize(): Promise<number> {
  const page = await h.host.runners.get('r')!.handlerEnv().state('journal').list({ limit: 1000 });
  return page.list.length;
}

test('a JWT without the principal claim is 401 on every route, and runs nothing', async () => {
  const before = await journalSize();
  for (const claims of [{}, { sub: '' }, { sub: 42 }, { sub: ['a'] }, { name: 'no sub' }]) {
    const t = await token(claims);
    const one = await note(bearer(t), 'x');
    assert.equal(one.status, 401, JSON.stringify(claims));
    assert.equal((one.body as { code: string }).code, 'UNAUTHORIZED');
    const stream = await fetch(`${base}/api/stream/feed`, { headers: bearer(t) });
    assert.equal(stream.status, 401);
    await stream.body?.cancel();
    assert.equal((await status(bearer(t), one.runId)).status, 401);
  }
  assert.equal(await journalSize(), before, 'no run was started');
});

test('gateway.auth.jwt.principalClaim names the claim; a token without it is 401', async () => {
  const settings = {
    ...h.settings,
    gateway: {
      ...h.settings.gateway,
      auth: {
        ...h.settings.gateway.auth,
        jwt: { ...h.settings.gateway.auth.jwt!, principalClaim: 'account.id' },
      },
    },
  };
  const g = await createGateway({ settings, service: h.host, log: silentLogger() });
  try {
    const post = async (claims: Record<string, unknown>) =>
      g.app.inject({
        method: 'POST',
        url: '/api/request/note',
        headers: { ...bearer(await token(claims)), 'content-type': 'application/json' },
        payload: { note: 'n' },
      });
    assert.equal((await post({ sub: 'alice' })).statusCode, 401, 'sub alone is not the configured claim');
    assert.equal((await post({ sub: 'alice', account: { id: '' } })).statusCode, 401);
    const ok = await post({ sub: 'alice', account: { id: 'acct-7' } });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.json().who, 'acct-7');
  } finally {
    await g.close();
  }
});

/** Tokens whose subject looks like another kind of caller. */
const LOOKALIKES = ['anonymous', 'anon', 'anon:127.0.0.1', '127.0.0.1', 'ip:127.0.0.1', 'apikey:ci', 'key:ci'];

test('a token that says "anonymous" (or an address, or an API key) never reads another caller status', async () => {
  const anon = await note({}, 'anonymous secret', 'shared-id');
  const key = await note({ 'x-api-key': KEY }, 'key secret', 'shared-id');
  assert.equal(anon.status, 200);
  assert.equal(key.status, 200);
  assert.equal((await status({}, anon.runId)).status, 200, 'the anonymous caller reads its own');
  // anonymous callers are found by run id only (docs/gateway.md): a shared address, a guessable id
  assert.equal((await status({}, 'shared-id')).status, 404);
  assert.equal((await status({ 'x-api-key': KEY }, key.runId)).status, 200, 'the key reads its own');

  for (const sub of LOOKALIKES) {
    const t = bearer(await token({ sub }));
    for (const id of [anon.runId, key.runId, 'shared-id']) {
      const s = await status(t, id);
      assert.equal(s.status, 404, `sub ${sub} reading ${id}`);
      assert.doesNotMatch(s.text, /secret/);
    }
    // ... and the other way round: its own run is invisible to the anonymous caller and the key.
    const own = await note(t, `token ${sub} secret`, 'shared-id');
    assert.equal(own.status, 200);
    assert.equal((own.body as { who: string }).who, sub);
    assert.equal((await status(t, own.runId)).status, 200);
    assert.match((await status(t, 'shared-id')).text, new RegExp(`token ${sub} secret`));
    for (const other of [{}, { 'x-api-key': KEY }] as Record<string, string>[]) {
      for (const id of [own.runId, 'shared-id']) {
        const s = await status(other, id);
        if (s.status === 200) assert.doesNotMatch(s.text, new RegExp(`token ${sub} secret`), `${sub}'s run leaked`);
        else assert.equal(s.status, 404);
      }
    }
  }
  // The anonymous caller and the key still see their own runs, untouched.
  assert.match((await status({}, anon.runId)).text, /anonymous secret/);
  assert.match((await status({ 'x-api-key': KEY }, 'shared-id')).text, /key secret/);
});

/** The SSE ids of a finite stream. */
async function cursors(headers: Record<string, string>): Promise<string[]> {
  const res = await fetch(`${base}/api/stream/feed`, { headers });
  assert.equal(res.status, 200);
  return [...(await res.text()).matchAll(/^id: (.+)$/gm)].map((m) => m[1]!);
}

async function resume(headers: Record<string, string>, cursor: string): Promise<number> {
  const res = await fetch(`${base}/api/stream/feed`, { headers: { ...headers, 'last-event-id': cursor } });
  await res.body?.cancel();
  return res.status;
}

test('a cursor is bound to its kind of caller: "anonymous" tokens and anonymous callers cannot replay each other', async () => {
  const anonCursor = (await cursors({}))[0]!;
  assert.equal(await resume({}, anonCursor), 200, 'the anonymous caller resumes its own');
  for (const sub of LOOKALIKES) {
    const t = bearer(await token({ sub }));
    assert.equal(await resume(t, anonCursor), 400, `sub ${sub} replaying the anonymous cursor`);
    const own = (await cursors(t))[0]!;
    assert.equal(await resume(t, own), 200);
    assert.equal(await resume({}, own), 400, `the anonymous caller replaying sub ${sub}'s cursor`);
    assert.equal(await resume({ 'x-api-key': KEY }, own), 400);
  }
  const keyCursor = (await cursors({ 'x-api-key': KEY }))[0]!;
  assert.equal(await resume(bearer(await token({ sub: 'apikey:ci' })), keyCursor), 400);
});

test('stream slots per client: a token named like an API key or an address does not use their slots', async () => {
  const open: AbortController[] = [];
  const connect = async (headers: Record<string, string>): Promise<number> => {
    const ac = new AbortController();
    open.push(ac);
    const res = await fetch(`${base}/api/stream/live`, { headers, signal: ac.signal });
    if (res.status !== 200) await res.body?.cancel();
    return res.status;
  };
  try {
    assert.equal(await connect({ 'x-api-key': KEY }), 200);
    assert.equal(await connect({}), 200);
    assert.equal(await connect({ 'x-api-key': KEY }), 429, 'the limit holds for the key itself');
    for (const sub of ['apikey:ci', 'key:ci', 'anon:127.0.0.1', 'ip:127.0.0.1', 'anonymous']) {
      assert.equal(await connect(bearer(await token({ sub }))), 200, `sub ${sub} has its own slot`);
    }
  } finally {
    for (const ac of open) ac.abort();
  }
});
