import { isLoopbackHost } from '../../console/access.js';

/**
 * `gateway.trustProxy` as fastify takes it (docs/gateway.md, Behind a proxy). A list names the
 * proxies: the client is the last X-Forwarded-For entry not written by one of them, so a client
 * that reaches the gateway directly (not from a listed address) is its socket address whatever
 * it writes. `true` trusts one hop, whatever connects: the client is the last entry (the one the
 * proxy appended). fastify's own `true` would take the first entry, which the client writes
 * itself (a proxy appends after it), letting any client pick its address: rate counts, stream
 * slots, idempotency quota, anonymous status scope.
 */
export function fastifyTrustProxy(
  setting: boolean | readonly string[],
): false | string[] | ((address: string, hop: number) => boolean) {
  if (Array.isArray(setting)) return [...setting];
  return setting === true ? (_address: string, hop: number) => hop < 1 : false;
}

/**
 * The warning `true` deserves when the gateway listens beyond this machine: any client that can
 * connect directly is then taken for the proxy and names its own address. Undefined otherwise.
 */
export function trustProxyWarning(setting: boolean | readonly string[], host: string): string | undefined {
  if (setting !== true || isLoopbackHost(host)) return undefined;
  return (
    `gateway.trustProxy is true and the gateway listens on ${host}: any client that connects directly ` +
    'chooses its own address (X-Forwarded-For) for the rate limit, stream slots and idempotency quota; ' +
    "list the proxy's addresses instead (trustProxy: [10.0.0.2]), or listen on 127.0.0.1 behind a local proxy"
  );
}
