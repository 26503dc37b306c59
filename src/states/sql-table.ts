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
