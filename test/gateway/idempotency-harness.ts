import { createHash } from 'node:crypto';
import type { IdempotencySettings, Settings, StateSettings } from '../../src/config/settings.js';
import type { Gateway } from '../../src/gateway/server.js';
import { ok, ScriptedService, settingsWith } from './harness.js';

/** Shared by the gateway tests of Idempotency-Key requests (memory and PostgreSQL stores). */

export const KEY_A = 'key-of-alice';
export const KEY_B = 'key-of-bob';
export const sha = (s: string) => createHash('sha256').update(s).digest('hex');

export function settings(
  idempotency: Partial<IdempotencySettings> = {},
  states: Record<string, StateSettings> = {},
): Settings {
  const base = settingsWith({
    auth: {
      apiKeys: [
        { name: 'alice', sha256: sha(KEY_A), roles: [] },
        { name: 'bob', sha256: sha(KEY_B), roles: [] },
      ],
    },
    apis: [
      { path: '/orders', runner: 'main', roles: [], public: false },
      { path: '/open', runner: 'main', roles: [], public: true },
      { path: '/other', runner: 'main', roles: [], public: true },
    ],
  });
  return {
    ...base,
    states,
    gateway: { ...base.gateway, idempotency: { ...base.gateway.idempotency, ttlMs: 60_000, ...idempotency } },
  };
}

/** A service that answers 201 with a new order id per run, echoing the input. */
export function orders(): ScriptedService {
  return new ScriptedService((req, _runner, n) => ok({ order: `o${n}`, input: req.input }, 201));
}

export function post(gw: Gateway, key: string | undefined, body: unknown, apiKey = KEY_A, url = '/api/request/orders') {
  return gw.app.inject({
    method: 'POST',
    url,
    headers: {
      'content-type': 'application/json',
      'x-api-key': apiKey,
      ...(key === undefined ? {} : { 'idempotency-key': key }),
    },
    payload: JSON.stringify(body),
  });
}
