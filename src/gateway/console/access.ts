import { BlockList, isIP } from 'node:net';
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { ConsoleSettings } from '../../config/settings.js';
import { callerKey } from '../../core/caller.js';
import type { CompiledApi } from '../apis/api-map.js';
import type { AuthDecision } from '../auth/authenticator.js';
import { extractCredential } from '../auth/credentials.js';
import { refusalDetail } from '../auth/refusal-detail.js';
import type { GatewayContext } from '../context.js';
import type { OnUnauthorized } from '../forms/admit.js';
import { problemFor, sendProblem } from '../http/helpers/problem.js';

/**
 * Who may open the console (docs/console.md, Access). With `roles`, the caller needs one of them,
 * authenticated exactly as for an API (bearer token, the token cookie, or X-API-Key). Without
 * `roles`, only this machine may: the client's address must be a loopback address, the Host
 * header must name this machine (a page of another site that resolves its own name to 127.0.0.1,
 * DNS rebinding, is refused), and the request must carry no forwarding header (a reverse proxy
 * on the same machine would make every client look local). Under `trustProxy` there is no such
 * mode: roles are needed (a local proxy that adds no X-Forwarded-For, a TCP forwarder, would pass
 * every remote client as loopback). Everyone else gets the gateway's plain 404, as if there were
 * no console.
 */

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** Whether an address is a loopback address (127.0.0.0/8, ::1, and IPv4-mapped 127.x). */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const mapped = address.toLowerCase().startsWith('::ffff:') ? address.slice(7) : address;
  if (isIP(mapped) === 4) return LOOPBACK.check(mapped, 'ipv4');
  return isIP(address) === 6 && LOOPBACK.check(address, 'ipv6');
}

/** Whether a Host header names this machine: localhost (and *.localhost), a loopback address, with any port. */
export function isLoopbackHost(host: string | undefined): boolean {
  if (host === undefined || host.length > 255) return false;
  let name = host.toLowerCase();
  if (name.startsWith('[')) {
    const end = name.indexOf(']');
    if (end < 0) return false;
    name = name.slice(1, end);
  } else {
    const colon = name.lastIndexOf(':');
    if (colon >= 0) name = name.slice(0, colon);
  }
  return name === 'localhost' || name.endsWith('.localhost') || isLoopbackAddress(name);
}

const FORWARDING_HEADERS = ['forwarded', 'x-forwarded-for', 'x-real-ip'];

/**
 * Whether a request may see the console without credentials (the loopback rule). Behind a
 * trusted proxy every hop must be loopback, not only `request.ip`: with `trustProxy: true`
 * fastify takes the leftmost X-Forwarded-For entry, which the client writes itself (a proxy
 * appends the real address after it), so `X-Forwarded-For: 127.0.0.1` would pass as local.
 */
export function isLocalRequest(request: FastifyRequest, trustProxy: boolean): boolean {
  if (!isLoopbackHost(request.headers.host)) return false;
  if (trustProxy) {
    // A proxy that sends X-Real-IP or Forwarded (which the gateway does not read) may send no
    // X-Forwarded-For at all: then the chain is the proxy alone. Those headers must not say
    // another client either (a Forwarded header is not parsed here: it refuses).
    const realIp = request.headers['x-real-ip'];
    if (request.headers['forwarded'] !== undefined) return false;
    if (realIp !== undefined && !(typeof realIp === 'string' && isLoopbackAddress(realIp.trim()))) return false;
    return (request.ips ?? [request.ip]).every(isLoopbackAddress);
  }
  if (!isLoopbackAddress(request.socket.remoteAddress)) return false;
  return !FORWARDING_HEADERS.some((h) => request.headers[h] !== undefined);
}

/** Who may reach a guarded set of routes: the console, or the run routes (`gateway.admin`). */
export type Guarded = Pick<ConsoleSettings, 'path' | 'roles'>;

/** The console as an API entry, so that role checks are exactly those of the APIs. */
function consoleApi(settings: Guarded): CompiledApi {
  return {
    settings: { path: settings.path, runner: '', roles: settings.roles, public: false },
    prefix: settings.path,
    allow: 'GET',
  };
}

/**
 * The onRequest check of every console route (and of the run routes, with `gateway.admin`'s
 * roles). The caller let in is left on the request (`adminCaller`): its caller key (`key:<name>`,
 * `jwt:<subject>`), or `loopback`.
 */
export function consoleGuard(
  ctx: GatewayContext,
  settings: Guarded,
  onUnauthorized?: OnUnauthorized,
): onRequestHookHandler {
  const api = consoleApi(settings);
  // The config compiler turns a console without roles off under trustProxy; this holds for
  // settings made by code.
  const behindProxy = ctx.settings.trustProxy !== false;
  return function guard(request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void {
    if (settings.roles.length === 0) {
      if (!behindProxy && isLocalRequest(request, false)) {
        callers.set(request, 'loopback');
        done();
      } else sendProblem(reply, problemFor('NOT_FOUND', request.id, 'no route serves this path'));
      return;
    }
    const credential = extractCredential(request.headers, ctx.settings.auth.cookie, undefined);
    const finish = (decision: AuthDecision): void => {
      if (decision.ok) {
        // by kind of credential (core/caller.ts): a token whose subject is "loopback" or
        // "apikey:ops" is neither this machine nor that API key
        callers.set(request, callerKey(decision.principal, ''));
        done();
        return;
      }
      const send = (): void =>
        void sendProblem(
          reply,
          problemFor(
            decision.code,
            request.id,
            refusalDetail(ctx.settings.auth, decision, request.headers, credential),
          ),
          decision.code === 'UNAUTHORIZED' ? { 'www-authenticate': 'Bearer realm="sagaway"' } : undefined,
        );
      // a refused credential counts against its source address, as on the APIs (admit.ts)
      if (decision.code === 'UNAUTHORIZED' && onUnauthorized) onUnauthorized(request, reply, api, send);
      else send();
    };
    const decision = ctx.auth.decide(api, credential);
    if (decision instanceof Promise) decision.then(finish, done);
    else finish(decision);
  };
}

/**
 * Whether this request would pass the guard of `settings` (the console's journal list asks it for
 * the run routes, to show their buttons only to who may use them), without answering it.
 */
export async function wouldPass(ctx: GatewayContext, settings: Guarded, request: FastifyRequest): Promise<boolean> {
  if (settings.roles.length === 0) return ctx.settings.trustProxy === false && isLocalRequest(request, false);
  const credential = extractCredential(request.headers, ctx.settings.auth.cookie, undefined);
  return (await ctx.auth.decide(consoleApi(settings), credential)).ok;
}

/** The callers the guard let in, by request (a WeakMap: nothing added to fastify's request type). */
const callers = new WeakMap<FastifyRequest, string>();

/** Who the guard let in for this request: the principal's caller key, or `loopback`. */
export function adminCaller(request: FastifyRequest): string {
  return callers.get(request) ?? 'unknown';
}

/**
 * Whether the caller of an open feed may still see it: with `roles`, its credential is decided
 * again (a token that expired, or lost the role, ends the feed at its next heartbeat, as an
 * API stream ends at its next poll); without, the loopback rule already held for the connection.
 */
export async function stillAllowed(ctx: GatewayContext, settings: Guarded, request: FastifyRequest): Promise<boolean> {
  if (settings.roles.length === 0) return true;
  const credential = extractCredential(request.headers, ctx.settings.auth.cookie, undefined);
  return (await ctx.auth.decide(consoleApi(settings), credential)).ok;
}
