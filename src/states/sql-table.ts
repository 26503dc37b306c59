import { createHash } from 'node:crypto';
import { SagawayError } from '../core/errors.js';

/** Quoted names of a SQL state's table and its idempotency table. */
export interface SqlTableNames {
  /** `"todos"` */
  t: string;
  /** `"todos_idem"` */
  ti: string;
}

/**
 * Check a table name and quote it. Names are identifiers of at most `maxLength` characters
 * (letters, digits, `_`), so they can be spliced into SQL text safely; CONFIG_INVALID otherwise.
 */
export function sqlTableNames(table: string, maxLength: number): SqlTableNames {
  if (!new RegExp(`^[A-Za-z_][A-Za-z0-9_]{0,${maxLength - 1}}$`).test(table)) {
    throw new SagawayError('CONFIG_INVALID', `invalid table name "${table}"`);
  }
  return { t: `"${table}"`, ti: `"${table}_idem"` };
}

/**
 * The name of the list index on `fields` of table `table` (states' ensureIndex): the table
 * name, cut to stay within PostgreSQL's 63 characters, and a short hash of the fields.
 * VALIDATION_FAILED for a field that is not a plain identifier (it goes into SQL text).
 */
export function listIndexName(table: string, fields: readonly string[], sort?: string): string {
  for (const f of sort === undefined ? fields : [...fields, sort]) {
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(f)) {
      throw new SagawayError('VALIDATION_FAILED', 'an indexed field must be a plain identifier');
    }
  }
  // an index ordered by a field is another index than one on the same fields in insertion order
  const key = sort === undefined ? fields.join('\n') : `${fields.join('\n')}\n>${sort}`;
  const hash = createHash('sha256').update(key).digest('hex').slice(0, 8);
  return `"${table.slice(0, 50)}_ix_${hash}"`;
}
