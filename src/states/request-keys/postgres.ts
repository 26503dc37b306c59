import { openPostgresRunner } from '../sql-runner.js';
import { SqlKeyStore } from './sql.js';

/**
 * Request keys in a PostgreSQL table (`<table>_reqkeys` beside the state's own table), shared by
 * every gateway replica that names the same state. A pool of its own (a few connections: a
 * keyed request makes two short statements); a failure to reach the server is
 * STATE_UNAVAILABLE.
 */
export function postgresKeyStore(
  alias: string,
  url: string,
  table: string,
  poolSize: number,
  onPruneError: (err: unknown) => void,
): SqlKeyStore {
  return new SqlKeyStore(
    'postgres',
    table,
    {
      bytes: 'BYTEA',
      bigint: 'BIGINT',
      addColumn: async (run, table, name, type) => {
        await run(`ALTER TABLE "${table}" ADD COLUMN IF NOT EXISTS ${name} ${type}`);
      },
    },
    () => openPostgresRunner(alias, url, poolSize),
    onPruneError,
  );
}
