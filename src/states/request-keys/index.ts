import type { StateSettings } from '../../config/settings.js';
import type { Logger } from '../../core/logger.js';
import { sqlTableNames } from '../sql-table.js';
import { MemoryKeyStore } from './memory.js';
import type { RequestKeyStore } from './store.js';

/**
 * The request key store that `gateway.idempotency.state` names: the gateway's own Map when no
 * state is named (or a `memory` one), else a `<table>_reqkeys` table in the SQLite file or
 * PostgreSQL database of that state. The SQL adapters are imported only when used.
 */

export type { Claim, KeyBinding, KeyQuota, RequestKeyStore, StoredResponse } from './store.js';
export { MemoryKeyStore } from './memory.js';

/** Suffix of the key table's name. */
export const KEY_TABLE_SUFFIX = '_reqkeys';

/** The store for `state` (undefined = in this process). */
export async function createRequestKeyStore(state: StateSettings | undefined, log: Logger): Promise<RequestKeyStore> {
  if (state === undefined || state.type === 'memory') return new MemoryKeyStore();
  // a checked identifier; PostgreSQL's are 63 characters at most (its state tables 55)
  const table = sqlTableNames(state.table + KEY_TABLE_SUFFIX, state.type === 'postgres' ? 63 : 128).t.slice(1, -1);
  const onPruneError = (err: unknown) =>
    log.warn({ err, state: state.alias }, 'pruning expired idempotency keys failed; tried again later');
  if (state.type === 'sqlite') {
    const { sqliteKeyStore } = await import('./sqlite.js');
    return sqliteKeyStore(state.file, table, onPruneError);
  }
  const { postgresKeyStore } = await import('./postgres.js');
  return postgresKeyStore(state.alias, state.url, table, Math.min(4, state.poolSize), onPruneError);
}
