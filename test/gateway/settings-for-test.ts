import type { GatewaySettings } from '../../src/config/settings.js';
import { settingsFor, type GatewayOverrides } from '../../src/testing/settings.js';

/** Partial gateway settings for tests, in compiled form: nested blocks may be partial too. */
export type GatewaySettingsInput = GatewayOverrides;

/**
 * The gateway settings a configuration without a `gateway` block compiles to (src/testing/settings.ts),
 * with `partial` laid over them. Unlike a configuration file: it listens on 0.0.0.0, it has one
 * public API `/` on runner `main` unless `apis` is given, and no rate limit unless `limits.rate`
 * is given (tests make many requests from one address).
 */
export function gatewaySettingsForTest(partial: GatewaySettingsInput = {}): GatewaySettings {
  return settingsFor(
    {},
    {
      gateway: {
        host: '0.0.0.0',
        apis: [{ path: '/', runner: 'main', roles: [], public: true }],
        ...partial,
        limits: { rate: undefined, ...partial.limits },
      },
    },
  ).gateway;
}
