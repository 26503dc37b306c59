import { openSqlite, type SqlStatement } from '../sqlite-driver.js';
import { SqlKeyStore, type SqlRunner } from './sql.js';

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
    async (): Promise<SqlRunner> => {
      const db = await openSqlite(file);
      db.exec('PRAGMA busy_timeout = 5000');
      if (file !== ':memory:') db.exec('PRAGMA journal_mode = WAL');
      const statements = new Map<string, { statement: SqlStatement; order: number[] }>();
      return {
        async query(sql, params) {
          let prepared = statements.get(sql);
          if (prepared === undefined) {
            // `$n` becomes `?` and the values are bound in the order they appear (better-sqlite3
            // binds values to `?NNN` by position, not by number)
            const order: number[] = [];
            const text = sql.replace(/\$(\d+)/g, (_, n: string) => (order.push(Number(n) - 1), '?'));
            prepared = { statement: db.prepare(text), order };
            statements.set(sql, prepared);
          }
          const values = prepared.order.map((i) => params[i]);
          // better-sqlite3 refuses all() on a statement that returns no rows
          if (!sql.startsWith('SELECT') && !sql.includes(' RETURNING ')) {
            prepared.statement.run(...values);
            return [];
          }
          return prepared.statement.all(...values) as Record<string, unknown>[];
        },
        async close() {
          db.close();
        },
      };
    },
    onPruneError,
  );
}
