import { DEFAULT_MAX_VALUES } from '../../src/core/json-values.js';
import type { GatewaySettings } from '../../src/config/settings.js';

/** Partial gateway settings for tests: nested blocks may be partial too. */
export interface GatewaySettingsInput {
  port?: number;
  host?: string;
  trustProxy?: boolean | readonly string[];
  auth?: Partial<GatewaySettings['auth']>;
  apis?: GatewaySettings['apis'];
  stream?: Partial<GatewaySettings['stream']>;
  limits?: Partial<GatewaySettings['limits']>;
  static?: string;
}

/**
 * Full GatewaySettings with the documented defaults filled in (the config compiler does the same
 * for files): defaultWait 1 s, minWait 50 ms, maxWait 5 m, heartbeat 15 s, maxPerClient 10,
 * maxStreams 10000, stallTimeout 30 s, maxEntries 1000, maxBuffered 1 MiB, share caller, bodyLimit 1 MiB, timeout
 * 10 s, maxResponse 8 MiB, headerTimeout 10 s, bodyTimeout 30 s, idleTimeout 60 s, maxConnections
 * 16384. Unlike a configuration file, no rate limit unless `limits.rate` is given: tests make many
 * requests from one address.
 */
export function gatewaySettingsForTest(partial: GatewaySettingsInput = {}): GatewaySettings {
  const auth = partial.auth ?? {};
  return {
    ...(partial.port === undefined ? {} : { port: partial.port }),
    host: partial.host ?? '0.0.0.0',
    trustProxy: partial.trustProxy ?? false,
    auth: {
      ...(auth.jwt === undefined ? {} : { jwt: auth.jwt }),
      apiKeys: auth.apiKeys ?? [],
      cookie: auth.cookie ?? 'sagaway_token',
      queryToken: auth.queryToken ?? false,
    },
    apis: partial.apis ?? [{ path: '/', runner: 'main', roles: [], public: true }],
    stream: {
      defaultWaitMs: 1000,
      minWaitMs: 50,
      maxWaitMs: 300_000,
      heartbeatMs: 15_000,
      maxPerClient: 10,
      maxStreams: 10_000,
      stallTimeoutMs: 30_000,
      maxEntries: 1000,
      maxBuffered: 1024 * 1024,
      share: 'caller',
      ...partial.stream,
    },
    limits: {
      bodyLimit: 1024 * 1024,
      timeoutMs: 10_000,
      headerTimeoutMs: 10_000,
      bodyTimeoutMs: 30_000,
      idleTimeoutMs: 60_000,
      maxConnections: 16_384,
      maxResponse: 8 * 1024 * 1024,
      maxValues: DEFAULT_MAX_VALUES,
      ...partial.limits,
    },
    ...(partial.static === undefined ? {} : { static: partial.static }),
  };
}
