import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DEFAULT_CONSOLE, type ConsoleSettings } from '../../config/settings.js';
import type { AuthDecision } from '../auth/authenticator.js';
import type { GatewayContext } from '../context.js';
import { consoleGuard, isLocalRequest, isLoopbackHost, stillAllowed } from './access.js';

/**
 * The console's access rules decided on hand-made requests (no socket): the loopback rule with and
 * without `trustProxy`, and the role check's answers. Written against the mutants of access.ts
 * that the console's HTTP tests let through (TESTING.md); test/gateway/console.test.ts covers the
 * same rules end to end.
 */

interface FakeRequest {
  headers: Record<string, string | string[] | undefined>;
  ip: string;
  ips?: string[];
  socket: { remoteAddress?: string };
  id: string;
}

function req(over: Partial<FakeRequest> = {}): FastifyRequest {
  const r: FakeRequest = {
    headers: { host: 'localhost:8080' },
    ip: '127.0.0.1',
    socket: { remoteAddress: '127.0.0.1' },
    id: 'r1',
    ...over,
  };
  return r as unknown as FastifyRequest;
}
const withHeaders = (headers: FakeRequest['headers'], over: Partial<FakeRequest> = {}): FastifyRequest =>
  req({ ...over, headers: { host: 'localhost:8080', ...headers } });

test('without trustProxy: a loopback socket and Host, and no forwarding header of any kind', () => {
  assert.equal(isLocalRequest(req(), false), true);
  // request.ip is not what decides without a trusted proxy: the socket is
  assert.equal(isLocalRequest(req({ ip: '10.0.0.9' }), false), true, 'request.ip is ignored');
  assert.equal(isLocalRequest(req({ socket: { remoteAddress: '10.0.0.9' } }), false), false, 'remote socket');
  assert.equal(isLocalRequest(req({ socket: {} }), false), false, 'no socket address');
  assert.equal(isLocalRequest(withHeaders({ host: 'evil.example' }), false), false, 'foreign Host');
  assert.equal(isLocalRequest(withHeaders({ host: undefined }), false), false, 'no Host');
  // Each forwarding header alone says a proxy relayed the request (nginx often sends only X-Real-IP).
  for (const h of ['forwarded', 'x-forwarded-for', 'x-real-ip'])
    assert.equal(isLocalRequest(withHeaders({ [h]: '127.0.0.1' }), false), false, h);
  assert.equal(isLocalRequest(withHeaders({ 'x-other': '1' }), false), true, 'an unrelated header');
});

test('with trustProxy: every hop loopback, X-Real-IP loopback if sent, no Forwarded; the socket is the proxy', () => {
  const proxied = { socket: { remoteAddress: '10.0.0.2' } };
  assert.equal(isLocalRequest(req({ ...proxied, ips: ['127.0.0.1', '127.0.0.2'] }), true), true, 'all hops local');
  assert.equal(isLocalRequest(req({ ips: ['127.0.0.1', '10.0.0.1'] }), true), false, 'one hop remote');
  assert.equal(isLocalRequest(req({ ips: ['10.0.0.1', '127.0.0.1'] }), true), false, 'client remote');
  // without request.ips (no X-Forwarded-For) the chain is request.ip alone
  assert.equal(isLocalRequest(req({ ...proxied, ip: '127.0.0.1' }), true), true, 'ip local');
  assert.equal(isLocalRequest(req({ ip: '10.0.0.1' }), true), false, 'ip remote');
  assert.equal(isLocalRequest(withHeaders({ host: 'evil.example' }), true), false, 'foreign Host');
  assert.equal(isLocalRequest(withHeaders({ forwarded: 'for=127.0.0.1' }), true), false, 'Forwarded refuses');
  assert.equal(isLocalRequest(withHeaders({ 'x-real-ip': ' 127.0.0.1 ' }), true), true, 'X-Real-IP local');
  assert.equal(isLocalRequest(withHeaders({ 'x-real-ip': '10.0.0.1' }), true), false, 'X-Real-IP remote');
  assert.equal(isLocalRequest(withHeaders({ 'x-real-ip': ['127.0.0.1'] }), true), false, 'X-Real-IP twice');
  assert.equal(isLocalRequest(withHeaders({ 'x-forwarded-for': '127.0.0.1' }), true), true, 'XFF is read via ips');
});

test('Host: over 255 characters refused; an unclosed bracket is no loopback name', () => {
  const name = (n: number) => 'a'.repeat(n - '.localhost'.length) + '.localhost';
  assert.equal(isLoopbackHost(name(255)), true);
  assert.equal(isLoopbackHost(name(256)), false);
  assert.equal(isLoopbackHost('[localhostx'), false);
});

/** A console context whose authenticator answers `answer` and records what it was asked. */
function context(answer: AuthDecision | Promise<AuthDecision>, trustProxy = false) {
  const asked: unknown[][] = [];
  const ctx = {
    settings: { trustProxy, auth: { cookie: 'sagaway_token', apiKeys: [] } },
    auth: {
      decide: (...args: unknown[]) => {
        asked.push(args);
        return answer;
      },
    },
  } as unknown as GatewayContext;
  return { ctx, asked };
}

function settings(roles: string[]): ConsoleSettings {
  return { ...DEFAULT_CONSOLE, enabled: true, roles };
}

interface Sent {
  status?: number;
  headers: Record<string, string>;
  type?: string;
  body?: Record<string, unknown>;
}

/** Runs the guard on `request`; resolves with what it did: passed on (`done`) or answered. */
function guard(
  ctx: GatewayContext,
  s: ConsoleSettings,
  request: FastifyRequest,
): Promise<{ done: true; err?: unknown } | Sent> {
  return new Promise((resolve) => {
    const sent: Sent = { headers: {} };
    const reply = {
      headers(h: Record<string, string>) {
        Object.assign(sent.headers, h);
        return reply;
      },
      code(status: number) {
        sent.status = status;
        return reply;
      },
      type(t: string) {
        sent.type = t;
        return reply;
      },
      send(body: string) {
        sent.body = JSON.parse(body) as Record<string, unknown>;
        resolve(sent);
        return reply;
      },
    };
    const hook = consoleGuard(ctx, s) as unknown as (
      r: FastifyRequest,
      p: FastifyReply,
      d: (e?: unknown) => void,
    ) => void;
    hook(request, reply as unknown as FastifyReply, (err?: unknown) =>
      resolve(err === undefined ? { done: true } : { done: true, err }),
    );
  });
}

test('no roles: the loopback rule, and everyone else the plain 404 of an unknown path', async () => {
  const { ctx, asked } = context({ ok: false, code: 'UNAUTHORIZED' });
  assert.deepEqual(await guard(ctx, settings([]), req()), { done: true });
  const refused = await guard(ctx, settings([]), req({ socket: { remoteAddress: '10.0.0.1' } }));
  assert.equal((refused as Sent).status, 404);
  assert.equal((refused as Sent).body?.['code'], 'NOT_FOUND');
  assert.equal((refused as Sent).body?.['detail'], 'no route serves this path');
  assert.equal((refused as Sent).body?.['requestId'], 'r1');
  assert.deepEqual((refused as Sent).headers, {});
  assert.equal(asked.length, 0, 'no credential is decided without roles');
  // behind a proxy (the gateway's trustProxy) there is no loopback-only mode: without roles even a
  // request whose every hop is loopback gets the plain 404 (issue 19: a TCP forwarder adds no header)
  const proxied = context({ ok: true, principal: {} as never }, true);
  const behind = await guard(proxied.ctx, settings([]), req({ ip: '127.0.0.1', ips: ['127.0.0.1'] }));
  assert.equal((behind as Sent).status, 404);
});

test('roles: the credential is decided as for a non-public GET API at the console path', async () => {
  const ok: AuthDecision = { ok: true, principal: { sub: 'a', roles: ['ops'], claims: {}, anonymous: false } };
  const { ctx, asked } = context(ok);
  const s = settings(['ops']);
  // a remote caller with the role passes: the loopback rule is not applied with roles
  const remote = withHeaders({ authorization: 'Bearer abc' }, { socket: { remoteAddress: '10.0.0.1' } });
  assert.deepEqual(await guard(ctx, s, remote), { done: true });
  assert.equal(asked.length, 1);
  assert.deepEqual(asked[0], [
    {
      settings: { path: '/console', runner: '', roles: ['ops'], public: false },
      prefix: '/console',
      allow: 'GET',
    },
    { kind: 'jwt', token: 'abc' },
  ]);
  // the token cookie named by gateway.auth.cookie is a credential too
  await guard(ctx, s, withHeaders({ cookie: 'sagaway_token=xyz' }));
  assert.deepEqual(asked[1]?.[1], { kind: 'jwt', token: 'xyz' });
  // and a JWT decided asynchronously
  const later = context(Promise.resolve(ok));
  assert.deepEqual(await guard(later.ctx, s, req()), { done: true });
});

test('roles: 401 with a Bearer challenge, 403 without one, and a failed decision goes to fastify', async () => {
  const s = settings(['ops']);
  const unauthorized = (await guard(context({ ok: false, code: 'UNAUTHORIZED' }).ctx, s, req())) as Sent;
  assert.equal(unauthorized.status, 401);
  assert.equal(unauthorized.body?.['code'], 'UNAUTHORIZED');
  assert.equal(unauthorized.type, 'application/problem+json');
  assert.match(String(unauthorized.body?.['detail']), /^authentication required; accepted: /);
  assert.deepEqual(unauthorized.headers, { 'www-authenticate': 'Bearer realm="sagaway"' });
  const forbidden = (await guard(
    context(Promise.resolve({ ok: false, code: 'FORBIDDEN', roles: ['ops'] } as AuthDecision)).ctx,
    s,
    req(),
  )) as Sent;
  assert.equal(forbidden.status, 403);
  assert.equal(forbidden.body?.['detail'], 'a required role is missing: this needs the role ops');
  assert.deepEqual(forbidden.headers, {});
  const boom = new Error('jwks down');
  const failed = await guard(context(Promise.reject(boom)).ctx, s, req());
  assert.deepEqual(failed, { done: true, err: boom });
});

test('stillAllowed: always without roles; with roles, the credential decided again', async () => {
  const yes = context({ ok: true, principal: {} as never });
  assert.equal(await stillAllowed(yes.ctx, settings([]), req()), true);
  assert.equal(yes.asked.length, 0);
  assert.equal(await stillAllowed(yes.ctx, settings(['ops']), withHeaders({ 'x-api-key': 'k' })), true);
  assert.deepEqual(yes.asked[0]?.[1], { kind: 'apikey', key: 'k' });
  assert.equal((yes.asked[0]?.[0] as { allow: string }).allow, 'GET');
  const no = context(Promise.resolve({ ok: false, code: 'FORBIDDEN' } as AuthDecision));
  assert.equal(await stillAllowed(no.ctx, settings(['ops']), req()), false);
});
