import type { CursorPosition } from './cursor.js';
import type { FilterValue, NormalizedList } from './list-options.js';

/**
 * The WHERE / ORDER BY of list() for the SQL states. Field names have passed FIELD_RE
 * (identifier characters only) before they reach here, so they can sit inside a JSON path
 * literal; every value is a bound parameter.
 */

/** How a dialect spells the pieces; `bind*` record the value and return its placeholder. */
export interface SqlDialect {
  /** the sort expression of a data field (`id` is the id column) */
  sortExpr(field: string): string;
  /** a filter condition on a field (`id` = the id column; null also matches a missing field) */
  equals(field: string, value: FilterValue): string;
  bind(value: unknown): string;
  /** placeholder of a cursor's sort key for `field` */
  bindKey(field: string, key: unknown): string;
  /** whether sort keys can be NULL (SQLite); PostgreSQL coalesces them to JSON null */
  nullableKeys: boolean;
  /** the insertion-order column */
  seq: string;
}

/** Build the WHERE conditions (to join with AND) and the ORDER BY of a page query. */
export function listClauses(
  o: NormalizedList,
  after: CursorPosition | undefined,
  d: SqlDialect,
): { where: string[]; orderBy: string; sortExpr: string } {
  const where: string[] = o.filter.map(([field, value]) => d.equals(field, value));
  if (o.field === undefined) {
    if (after) where.push(`${d.seq} > ${d.bind(after.key)}`);
    return { where, orderBy: `${d.seq} ASC`, sortExpr: d.seq };
  }
  const sk = d.sortExpr(o.field);
  const dir = o.desc ? 'DESC' : 'ASC';
  if (after) {
    const gt = o.desc ? '<' : '>';
    if (d.nullableKeys && after.key === null) {
      // SQLite sorts NULL first ascending and last descending
      const id = d.bind(after.id);
      where.push(o.desc ? `(${sk} IS NULL AND id < ${id})` : `((${sk} IS NULL AND id > ${id}) OR ${sk} IS NOT NULL)`);
    } else {
      const k1 = d.bindKey(o.field, after.key);
      const k2 = d.bindKey(o.field, after.key);
      const id = d.bind(after.id);
      const nulls = d.nullableKeys && o.desc ? ` OR ${sk} IS NULL` : '';
      where.push(`(${sk} ${gt} ${k1}${nulls} OR (${sk} = ${k2} AND id ${gt} ${id}))`);
    }
  }
  return { where, orderBy: `${sk} ${dir}, id ${dir}`, sortExpr: sk };
}
