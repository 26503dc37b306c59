import type { HttpSystemSettings, Settings } from '../../config/settings.js';
import { SagawayError } from '../../core/errors.js';
import type { ActionContext, HandlerDefinition, HandlerEnv, HandlerFactory } from '../api.js';
import type { RestClient, RestClientOptions } from './client.js';
import { buildRequest } from './request.js';

/**
 * The `rest` built-in handler (DESIGN §6.8): `CallRest` version 0 calls the `http` system named
 * by the step's `domain`. See docs/handlers/rest.md for parameters, errors and the SSRF policy.
 */

/** The `http` system called `domain`, or DOMAIN_NOT_FOUND. */
export function httpSystem(settings: Settings, domain: string | undefined): HttpSystemSettings {
  const system = domain !== undefined && Object.hasOwn(settings.systems, domain) ? settings.systems[domain] : undefined;
  if (system?.type !== 'http') {
    throw new SagawayError(
      'DOMAIN_NOT_FOUND',
      `rest.CallRest needs a domain naming an http system; "${domain ?? ''}" is not one`,
    );
  }
  return system;
}

/** Methods that change nothing upstream, so they carry no Idempotency-Key. */
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Visible ASCII without spaces, as Idempotency-Key values are written. */
const HEADER_SAFE = /^[\x21-\x7e]{1,512}$/;

/** A rest handler factory with injected client options (tests inject DNS lookup and connect steps). */
export function createRestHandler(options: RestClientOptions = {}): HandlerFactory {
  return (env: HandlerEnv): HandlerDefinition => {
    // one pooled client per system and runner; idle sockets are unref'd by undici, so nothing
    // here keeps the process alive
    const clients = new Map<string, RestClient>();
    const clientFor = async (system: HttpSystemSettings): Promise<RestClient> => {
      let client = clients.get(system.name);
      if (!client) {
        // the client (and undici) is loaded at the first call, not when the handler is listed:
        // `sagaway validate` and runners that never call out do not pay for it
        const { RestClient } = await import('./client.js');
        client = clients.get(system.name) ?? new RestClient(system, options);
        clients.set(system.name, client);
      }
      return client;
    };
    const callRest = async (input: unknown, ctx: ActionContext): Promise<unknown> => {
      const system = httpSystem(env.settings, ctx.domain);
      const request = buildRequest(system, ctx.parameters, input);
      // A retried try, a redelivered event or a resumed undo sends the same key: an upstream
      // that honours Idempotency-Key applies the call once. A key the step sets itself wins.
      // (Step ids are free text: a key that is not a plain header value is not sent.)
      if (!SAFE_METHODS.has(request.method) && HEADER_SAFE.test(ctx.idempotencyKey)) {
        request.headers['idempotency-key'] ??= ctx.idempotencyKey;
      }
      const response = await (await clientFor(system)).send(request, ctx.signal, ctx.log);
      return response.body;
    };
    return { name: 'rest', actions: { CallRest: { 0: callRest } } };
  };
}

/** The `rest` handler with the system resolver and real sockets. */
export const restHandler: HandlerFactory = createRestHandler();
