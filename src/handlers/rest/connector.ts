import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, type Socket } from 'node:net';
import { buildConnector } from 'undici';
import { assertAddressAllowed, type AddressPolicy } from './address-policy.js';

/**
 * The connect step of the rest handler's undici Agent. Every new connection goes through here:
 * the host name is resolved once, every address is checked by the SSRF policy, and the socket
 * is opened to the checked address itself (never to the name again), so the address that is
 * connected to is exactly the one that was checked. That closes DNS rebinding, where a name
 * answers a public address to the check and a private one to the connect.
 */

/** One resolved address. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to its addresses; default: the system resolver (`dns.lookup`, all addresses). */
export type LookupFn = (hostname: string) => Promise<readonly ResolvedAddress[]>;

/** Where a socket is about to be opened: an address that has passed the policy. */
export interface ConnectTarget {
  /** the checked IP address */
  address: string;
  family: 4 | 6;
  port: number;
  protocol: 'http:' | 'https:';
  /** the host name of the URL (TLS server name and certificate check), or the IP literal */
  hostname: string;
}

/** Opens a socket to a checked target; default: undici's own connector (TLS for https:). */
export type ConnectFn = (target: ConnectTarget) => Promise<Socket>;

/** Options of guardedConnector. */
export interface GuardedConnectorOptions {
  policy: AddressPolicy;
  /** DNS resolution; default dns.lookup with `all: true` */
  lookup?: LookupFn;
  /** opens the socket; default undici's buildConnector */
  connect?: ConnectFn;
  /** TCP+TLS connect timeout in ms; default 10 s */
  connectTimeoutMs?: number;
  /** trusted CA certificates (PEM) instead of Node's default store; for the default connect step */
  ca?: string | Buffer | readonly (string | Buffer)[];
}

/** A host name resolving to more addresses than this is cut: we only try a few anyway. */
const MAX_ADDRESSES = 16;

/** The system resolver, every address, in the order the resolver gives them. */
export const systemLookup: LookupFn = async (hostname) => {
  const found = await dnsLookup(hostname, { all: true, verbatim: true });
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/** The default connect step: undici's connector, aimed at the checked IP with the original TLS name. */
export function undiciConnect(timeoutMs: number, ca?: GuardedConnectorOptions['ca']): ConnectFn {
  // the certificate is still verified against the URL's host name (servername), not the IP
  const connector = buildConnector(
    ca === undefined ? { timeout: timeoutMs } : { timeout: timeoutMs, ca: ca as string[] },
  );
  return (target) =>
    new Promise<Socket>((resolve, reject) => {
      const servername = isIP(target.hostname) === 0 ? target.hostname : undefined;
      connector(
        {
          hostname: target.address,
          protocol: target.protocol,
          port: String(target.port),
          ...(servername === undefined ? {} : { servername }),
        },
        (err, socket) => (err ? reject(err) : resolve(socket as Socket)),
      );
    });
}

/** Resolve `hostname` (or take it as an IP literal) and check every address; throws SSRF_BLOCKED. */
export async function resolveChecked(
  hostname: string,
  policy: AddressPolicy,
  lookup: LookupFn,
): Promise<ResolvedAddress[]> {
  const literal = isIP(hostname);
  const addresses: ResolvedAddress[] =
    literal !== 0
      ? [{ address: hostname, family: literal as 4 | 6 }]
      : [...(await lookup(hostname))].slice(0, MAX_ADDRESSES);
  if (addresses.length === 0) throw Object.assign(new Error('name did not resolve'), { code: 'ENOTFOUND' });
  // every address must pass, not just the first: a name that mixes public and private answers
  // is refused as a whole rather than trusted for whichever answer happens to come first
  for (const a of addresses) assertAddressAllowed(a.address, policy);
  return addresses;
}

/** An undici `connect` function that enforces the SSRF policy on resolved addresses. */
export function guardedConnector(options: GuardedConnectorOptions): buildConnector.connector {
  const lookup = options.lookup ?? systemLookup;
  const connect = options.connect ?? undiciConnect(options.connectTimeoutMs ?? 10_000, options.ca);
  return (opts, callback) => {
    const protocol = opts.protocol === 'https:' ? 'https:' : 'http:';
    const port = Number(opts.port) || (protocol === 'https:' ? 443 : 80);
    const hostname = opts.hostname;
    void (async () => {
      const addresses = await resolveChecked(hostname, options.policy, lookup);
      let lastError: unknown;
      // try the checked addresses in order (a dual-stack name whose first family is unreachable)
      for (const a of addresses.slice(0, 4)) {
        try {
          return await connect({ address: a.address, family: a.family, port, protocol, hostname });
        } catch (err) {
          lastError = err;
        }
      }
      throw lastError;
    })().then(
      (socket) => callback(null, socket),
      (err: unknown) => callback(err instanceof Error ? err : new Error('connect failed'), null),
    );
  };
}
