import { resolve } from 'node:path';
import { DEFAULT_MAX_RECORD_VALUES } from '../core/json-values.js';
import { parseDuration, parseSize } from '../core/units.js';
import type { RawConfig, RawState, RawSystem } from './schema.js';
import { DEFAULT_MAX_PAGE_BYTES, type SecretsSettings, type StateSettings, type SystemSettings } from './settings.js';

/** `systems`, `states` and `secrets` with their documented defaults (docs/configuration.md). */

const ms = (v: unknown, fallback: number) => parseDuration(v) ?? fallback;

/** How often a runner process advertises itself on a nats system unless `advertiseInterval` says otherwise. */
export const DEFAULT_ADVERTISE_INTERVAL_MS = 2000;

export function compileSystem(name: string, sys: RawSystem): SystemSettings {
  switch (sys.type) {
    case 'nats':
      return {
        type: 'nats',
        name,
        servers: sys.servers,
        ackWaitMs: ms(sys.ackWait, 30_000),
        maxDeliver: sys.maxDeliver ?? 5,
        connectTimeoutMs: ms(sys.connectTimeout, 2000),
        runGraceMs: ms(sys.runGrace, 2000),
        publishTimeoutMs: ms(sys.publishTimeout, 5000),
        eventsMaxAgeMs: ms(sys.eventsMaxAge, 60 * 60 * 1000),
        repliesMaxAgeMs: ms(sys.repliesMaxAge, 10 * 60 * 1000),
        advertiseIntervalMs: ms(sys.advertiseInterval, DEFAULT_ADVERTISE_INTERVAL_MS),
        ...(sys.user !== undefined ? { user: sys.user } : {}),
        ...(sys.pass !== undefined ? { pass: sys.pass } : {}),
        ...(sys.token !== undefined ? { token: sys.token } : {}),
        prefix: sys.prefix ?? 'sagaway',
      };
    case 'http':
      return {
        type: 'http',
        name,
        baseUrl: sys.baseUrl,
        timeoutMs: ms(sys.timeout, 10_000),
        maxResponseSize: parseSize(sys.maxResponseSize) ?? 10 * 1024 * 1024,
        headers: sys.headers ?? {},
        allowPrivate: sys.allowPrivate ?? false,
        followRedirects: sys.followRedirects ?? false,
      };
    case 'local':
      return { type: 'local', name };
  }
}

export function compileState(alias: string, st: RawState, baseDir: string): StateSettings {
  const base = {
    alias,
    queries: st.queries ?? {},
    maxPageBytes: Math.max(1, parseSize(st.maxPageSize) ?? DEFAULT_MAX_PAGE_BYTES),
    maxValues: st.maxValues ?? DEFAULT_MAX_RECORD_VALUES,
    ...(st.seed !== undefined ? { seed: resolve(baseDir, st.seed) } : {}),
  };
  switch (st.type) {
    case 'memory':
      return { ...base, type: 'memory' };
    case 'sqlite':
      return {
        ...base,
        type: 'sqlite',
        file: st.file === ':memory:' ? st.file : resolve(baseDir, st.file),
        table: st.table ?? alias,
      };
    case 'postgres':
      return { ...base, type: 'postgres', url: st.url, table: st.table ?? alias, poolSize: st.poolSize ?? 10 };
  }
}

export function compileSecrets(raw: RawConfig, baseDir: string): SecretsSettings {
  const s = raw.secrets;
  if (!s) return { from: 'env', prefix: 'SAGAWAY_SECRET_' };
  if (s.from === 'env') return { from: 'env', prefix: s.prefix ?? 'SAGAWAY_SECRET_' };
  return { from: 'file', file: resolve(baseDir, s.file) };
}
