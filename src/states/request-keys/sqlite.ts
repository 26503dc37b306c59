import { openSqliteRunner } from '../sql-runner.js';
import { SqlKeyStore } from './sql.js';

/**
 * Request keys in a SQLite file (`<table>_reqkeys` beside the state's own table). Processes
 * that share the file share the keys (WAL, and a busy timeout for the moments another one
 * writes). Statements run synchronously; each is one atomic statement.
 */
export function sqliteKeyStore(file: string, table: string, onPruneError: (err: unknown) => void): SqlKeyStore {
  return new SqlKeyStore(
    'sqlite',
    table,
    {
      bytes: 'BLOB',
      bigint: 'INTEGER',
      async addColumn(run, table, name, type) {
        const columns = await run(`SELECT name FROM pragma_table_info('${table}')`);
        if (!columns.some((c) => c.name === name)) await run(`ALTER TABLE "${table}" ADD COLUMN ${name} ${type}`);
      },
    },
    () => openSqliteRunner(file),
    onPruneError,
  );
}
