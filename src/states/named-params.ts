import { SagawayError } from '../core/errors.js';

/**
 * Named parameters of configured SQL queries (`:owner`). The SQL text is compiled once into the
 * driver's positional form (`?` for SQLite, `$1` for PostgreSQL) plus the list of names, and
 * values are always bound by the driver: nothing from a request is ever spliced into SQL.
 *
 * The scanner skips what is not a placeholder: string literals ('it''s :x'), quoted identifiers
 * ("a:b"), comments (-- and /* *\/), PostgreSQL dollar-quoted strings ($$ ... $$) and `::type`
 * casts. Backslash escapes are not recognised inside '...' (standard SQL; E'...' strings with a
 * `\'` are the one PostgreSQL form this does not follow — write '' instead).
 */

/** A query compiled for one driver. `names[i]` binds the i-th positional parameter. */
export interface CompiledQuery {
  text: string;
  names: string[];
}

const NAME_START = /[A-Za-z_]/;
const NAME_PART = /[A-Za-z0-9_]/;

/**
 * Compile `sql` for `dialect`. In SQLite each occurrence gets its own `?`; in PostgreSQL a name
 * used twice reuses its `$n`.
 */
export function compileNamedQuery(sql: string, dialect: 'sqlite' | 'postgres'): CompiledQuery {
  let out = '';
  const names: string[] = [];
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const c = sql[i] as string;
    const next = sql[i + 1];
    if (c === "'" || c === '"' || c === '`') {
      const end = closeQuoted(sql, i, c);
      out += sql.slice(i, end);
      i = end;
    } else if (c === '-' && next === '-') {
      const nl = sql.indexOf('\n', i);
      const end = nl < 0 ? n : nl;
      out += sql.slice(i, end);
      i = end;
    } else if (c === '/' && next === '*') {
      const close = sql.indexOf('*/', i + 2);
      const end = close < 0 ? n : close + 2;
      out += sql.slice(i, end);
      i = end;
    } else if (c === '$' && dialect === 'postgres' && /[A-Za-z_$]/.test(next ?? '')) {
      const tag = /^\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i));
      if (tag) {
        const close = sql.indexOf(tag[0], i + tag[0].length);
        const end = close < 0 ? n : close + tag[0].length;
        out += sql.slice(i, end);
        i = end;
      } else {
        out += c;
        i++;
      }
    } else if (c === ':' && next === ':') {
      out += '::';
      i += 2;
    } else if (c === ':' && next !== undefined && NAME_START.test(next) && !NAME_PART.test(sql[i - 1] ?? ' ')) {
      let j = i + 1;
      while (j < n && NAME_PART.test(sql[j] as string)) j++;
      const name = sql.slice(i + 1, j);
      if (dialect === 'sqlite') {
        names.push(name);
        out += '?';
      } else {
        let index = names.indexOf(name);
        if (index < 0) index = names.push(name) - 1;
        out += `$${index + 1}`;
      }
      i = j;
    } else {
      out += c;
      i++;
    }
  }
  return { text: out, names };
}

/** End (exclusive) of the quoted run starting at `start`; a doubled quote is an escaped quote. */
function closeQuoted(sql: string, start: number, quote: string): number {
  let i = start + 1;
  while (i < sql.length) {
    if (sql[i] === quote) {
      if (sql[i + 1] === quote) i += 2;
      else return i + 1;
    } else i++;
  }
  return sql.length;
}

/** A bound value as the drivers take it: objects and arrays as JSON text. */
export type BoundValue = string | number | boolean | null;

/**
 * The values for a compiled query's names, from `bindings` (own keys only). A name missing from
 * the input fails with VALIDATION_FAILED: binding NULL silently would make a typo look like an
 * empty result. Pass `null` explicitly for SQL NULL.
 */
export function bindValues(names: readonly string[], bindings: Record<string, unknown>): BoundValue[] {
  return names.map((name) => {
    if (!Object.hasOwn(bindings, name) || bindings[name] === undefined) {
      throw new SagawayError('VALIDATION_FAILED', `query parameter "${name}" is missing from the input`);
    }
    const value = bindings[name];
    if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
    if (typeof value === 'number') {
      if (!Number.isFinite(value))
        throw new SagawayError('VALIDATION_FAILED', `query parameter "${name}" is not finite`);
      return value;
    }
    return JSON.stringify(value);
  });
}
