import type { PoolClient, QueryResult, QueryResultRow } from 'pg';
import type { SagawayError } from '../core/errors.js';
import { listIndexName } from './sql-table.js';

/**
 * The tables of a `postgres` state (postgres.ts): the records' table and its key table
 * (`<table>_idem`), created when missing, a key table of 0.1 migrated, and the list indexes.
 * Several processes may start on one database at once: every statement here tolerates another
 * process creating the same thing at the same moment.
 */

/** What the DDL needs of the state: one statement on any connection, and a transaction. */
export interface PostgresSql {
  run<R extends QueryResultRow = QueryResultRow>(sql: string, params?: unknown[]): Promise<QueryResult<R>>;
  transaction<T>(fn: (client: PoolClient) => Promise<T>): Promise<T>;
}

/** The quoted names of a state's tables (sql-table.ts) and its configured table name. */
export interface PostgresTables {
  /** `table` as configured (index names are made from it) */
  table: string;
  /** the records' table, quoted */
  t: string;
  /** the key table, quoted */
  ti: string;
}

/** The SQLSTATE of a failed statement (SagawayError wraps the driver's error as its cause). */
function sqlState(err: unknown): string | undefined {
  return ((err as SagawayError).cause as { code?: string } | undefined)?.code;
}

/** A CREATE INDEX that failed because another process created the same index at the same moment: done. */
function createdElsewhere(err: unknown): void {
  const code = sqlState(err);
  if (code !== '23505' && code !== '42P07') throw err;
}

/**
 * Tables and indexes, created when missing. Two processes starting at once can both try to
 * create them; PostgreSQL then reports a duplicate for one of them, which is retried.
 */
export async function createTables(db: PostgresSql, { table, t, ti }: PostgresTables): Promise<void> {
  const ddl = [
    `CREATE TABLE IF NOT EXISTS ${t} (seq BIGSERIAL NOT NULL, id TEXT PRIMARY KEY, version INTEGER NOT NULL, ` +
      `data JSONB NOT NULL, created_at TIMESTAMPTZ NOT NULL DEFAULT now(), updated_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
    `CREATE INDEX IF NOT EXISTS "${table}_seq" ON ${t} (seq)`,
    // record_id and version are NULL only between a claim and the write of its transaction
    `CREATE TABLE IF NOT EXISTS ${ti} (key TEXT PRIMARY KEY, record_id TEXT, version INTEGER, hash TEXT, ` +
      `n BIGSERIAL NOT NULL, created_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
  ];
  for (const sql of ddl) {
    for (let attempt = 1; ; attempt++) {
      try {
        await db.run(sql);
        break;
      } catch (err) {
        const code = sqlState(err);
        if (attempt < 3 && (code === '23505' || code === '42P07' || code === '42710')) continue;
        throw err;
      }
    }
  }
  await migrateKeyTable(db, table, ti);
  await db.run(`CREATE INDEX IF NOT EXISTS "${table}_idem_n" ON ${ti} (n)`).catch(createdElsewhere);
}

/**
 * A key table of 0.1 holds a full copy of each result (`result`): rewritten to the small form
 * in one transaction, keeping every key (their hash is unknown, so a redelivery of one answers
 * `{ id, version, data: {} }` and still applies nothing). The table lock makes a second
 * process wait, then find nothing left to do.
 */
async function migrateKeyTable(db: PostgresSql, table: string, ti: string): Promise<void> {
  const hasResult = async (c?: PoolClient): Promise<boolean> => {
    const sql =
      `SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema()` +
      ` AND table_name = $1 AND column_name = 'result'`;
    const params = [`${table}_idem`];
    return ((c ? await c.query(sql, params) : await db.run(sql, params)).rowCount ?? 0) > 0;
  };
  if (!(await hasResult())) return;
  await db.transaction(async (c) => {
    await c.query(`LOCK TABLE ${ti} IN ACCESS EXCLUSIVE MODE`);
    if (!(await hasResult(c))) return;
    await c.query(
      `ALTER TABLE ${ti} ADD COLUMN IF NOT EXISTS record_id TEXT, ADD COLUMN IF NOT EXISTS version INTEGER,` +
        ` ADD COLUMN IF NOT EXISTS hash TEXT, ADD COLUMN IF NOT EXISTS n BIGSERIAL NOT NULL`,
    );
    await c.query(
      `UPDATE ${ti} SET record_id = result->>'id', version = (result->>'version')::int WHERE result IS NOT NULL`,
    );
    await c.query(`ALTER TABLE ${ti} DROP COLUMN result`);
    await c.query(`DROP INDEX IF EXISTS "${table}_idem_at"`);
  });
}

/**
 * The list index on `fields` (list() filters them as `COALESCE(data->'f', 'null'::jsonb)`,
 * ordered by seq): the same expressions, so the planner uses it for that filter and order.
 */
export async function createListIndex(
  db: PostgresSql,
  { table, t }: PostgresTables,
  fields: readonly string[],
  sort?: string,
): Promise<void> {
  const cols = fields.map((f) => `COALESCE(data->'${f}', 'null'::jsonb)`);
  const name = listIndexName(table, fields, sort);
  // ordered as list() sorts (the field's expression, then the id), or in insertion order
  const tail = sort === undefined ? ['seq'] : [`COALESCE(data->'${sort}', 'null'::jsonb)`, 'id'];
  await db.run(`CREATE INDEX IF NOT EXISTS ${name} ON ${t} (${[...cols, ...tail].join(', ')})`).catch(createdElsewhere);
}
