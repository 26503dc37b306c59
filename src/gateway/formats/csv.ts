import { renderWithin, type TOO_LARGE } from './budget.js';
import { displayText } from './escape.js';

/**
 * CSV format (DESIGN §8, RFC 4180): one row per entry of the response's `list`, columns the union
 * of the entries' keys in first-seen order (entries that are not objects go in a `value`
 * column), nested values as JSON, CRLF line ends. Cells (headers included) that begin with `=`,
 * `+`, `-`, `@`, tab or CR are prefixed with `'` so spreadsheets do not run them as formulas.
 */

/** Media type of the CSV format. */
export const CSV_TYPE = 'text/csv; charset=utf-8; header=present';

const NEEDS_QUOTES = /[",\r\n]|^\s|\s$/;
const FORMULA_START = /^[=+\-@\t\r]/;

/** One cell: neutralised, then quoted when needed. */
export function csvCell(value: unknown): string {
  let text = displayText(value);
  if (typeof value === 'string' && FORMULA_START.test(text)) text = "'" + text;
  return NEEDS_QUOTES.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text;
}

/** Serialise a response's `list` as CSV; undefined when it has no list (406), TOO_LARGE past `max` bytes. */
export function toCsv(response: unknown, max = Infinity): string | typeof TOO_LARGE | undefined {
  if (typeof response !== 'object' || response === null || Array.isArray(response)) return undefined;
  const list = (response as Record<string, unknown>)['list'];
  if (!Array.isArray(list)) return undefined;
  const columns: string[] = [];
  const seen = new Set<string>();
  const addColumn = (key: string): void => {
    if (!seen.has(key)) {
      seen.add(key);
      columns.push(key);
    }
  };
  for (const entry of list) {
    if (typeof entry === 'object' && entry !== null && !Array.isArray(entry)) Object.keys(entry).forEach(addColumn);
    else addColumn('value');
  }
  return renderWithin(max, (out) => {
    out.push(columns.map(csvCell).join(',') + '\r\n');
    for (const entry of list) {
      const isRecord = typeof entry === 'object' && entry !== null && !Array.isArray(entry);
      const row = columns.map((c) => {
        if (!isRecord) return c === 'value' ? csvCell(entry) : '';
        const rec = entry as Record<string, unknown>;
        return Object.hasOwn(rec, c) ? csvCell(rec[c]) : '';
      });
      out.push(row.join(',') + '\r\n');
    }
  });
}
