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

/**
 * Wrap a page query (`inner`, which selects `id`, the size of its data in bytes as `_n` and its
 * sort expression as `_o`, but not the data) so that the page stops at a byte budget: a running
 * sum of the records' data size, in page order, and every row past the budget comes back with
 * a NULL `data` (the first row always gets its data, so a page always moves on). The data is
 * read by id (`table`), only for the rows within the budget: the window query copies every row
 * it sorts, and with the data inside it a page of 4 records of 1 MB read all 51 rows of its
 * `limit` (SQLite: 250 ms of the event loop instead of 25). `budget` is our own validated
 * integer, so it is written into the text (a statement per state, cached).
 */
export function withPageBudget(
  inner: string,
  o: NormalizedList,
  columns: string,
  table: string,
  budget: number,
): string {
  const dir = o.desc ? 'DESC' : 'ASC';
  const order = o.field === undefined ? '_o ASC' : `_o ${dir}, id ${dir}`;
  return (
    `SELECT ${columns}, CASE WHEN SUM(_n) OVER w <= ${Math.floor(budget)} OR SUM(_n) OVER w = _n` +
    ` THEN (SELECT x.data FROM ${table} x WHERE x.id = s.id) END AS data FROM (${inner}) s` +
    ` WINDOW w AS (ORDER BY ${order} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) ORDER BY ${order}`
  );
}

/**
 * Cut a page (already trimmed to its limit and bytes) once its records hold more than `budget`
 * JSON values in all (`states.<alias>.maxValues`); the first record always stays, so a page
 * always moves on. `count(row, max)` counts one row's values, stopping past `max`. Returns
 * whether it cut. Bytes alone do not bound the work: 4 MB of `[]` are 1.4 million values.
 */
export function cutPageByValues<R>(rows: R[], budget: number, count: (row: R, max: number) => number): boolean {
  let total = 0;
  for (let i = 0; i < rows.length; i++) {
    total += count(rows[i]!, budget - total);
    if (i > 0 && total > budget) {
      rows.length = i;
      return true;
    }
  }
  return false;
}

/**
 * Trim a page's rows (fetched with one row of look-ahead) to the page and say whether more
 * follow: rows past the byte budget (`data` NULL, see withPageBudget) or past `limit`.
 */
export function trimPage(rows: { data: unknown }[], limit: number): boolean {
  const cut = rows.findIndex((r) => r.data === null);
  if (cut >= 0) {
    rows.length = cut;
    return true;
  }
  if (rows.length <= limit) return false;
  rows.length = limit;
  return true;
}
