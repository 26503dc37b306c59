import { toStateError } from '../postgres-errors.js';
import { SqlKeyStore, type SqlRunner } from './sql.js';

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
    async (): Promise<SqlRunner> => {
      const pg = (await import('pg')).default;
      const pool = new pg.Pool({
        connectionString: url,
        max: poolSize,
        connectionTimeoutMillis: 5000,
        idleTimeoutMillis: 30_000,
        statement_timeout: 10_000,
      });
      // an idle connection that dies (server restart) is dropped by the pool, not thrown
      pool.on('error', () => undefined);
      return {
        async query(sql, params) {
          try {
            return (await pool.query(sql, params as unknown[])).rows as Record<string, unknown>[];
          } catch (err) {
            throw toStateError(alias, err);
          }
        },
        close: () => pool.end(),
      };
    },
    onPruneError,
  );
}
