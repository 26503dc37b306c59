import { overBudget, renderWithin, TOO_LARGE, type Parts } from './budget.js';
import { displayText, escapeText } from './escape.js';

/**
 * HTML format (DESIGN §8): the response's `html` field as the saga wrote it (the saga's own
 * page), else a table of `list`, else a definition list of the response. Generated pages escape
 * every piece of data. Every HTML response carries a Content-Security-Policy without scripts:
 * generated pages a fixed one, the saga's own page OWN_HTML_CSP unless its API entry sets
 * `csp`. A saga that echoes its input into `html` is then no reflected XSS: the browser runs no
 * script, loads nothing from elsewhere and posts no form.
 */

/** Media type of the HTML format. */
export const HTML_TYPE = 'text/html; charset=utf-8';

/** CSP of generated pages: no scripts, no external loads, inline styles only, never framed. */
export const GENERATED_HTML_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * Default CSP of a saga's own page: inline styles and `data:` images, nothing else (no script,
 * no fetch, no frame, no form target, no `<base>`), and no other site may frame it.
 * `gateway.apis[].csp` replaces it for the paths of that API entry.
 */
export const OWN_HTML_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const HEAD =
  '<!doctype html><html><head><meta charset="utf-8"><title>sagaway</title>' +
  '<style>table,td,th{border:1px solid #ccc;border-collapse:collapse;padding:4px}dt{font-weight:bold}</style></head><body>';
const TAIL = '</body></html>';

function cell(value: unknown): string {
  return escapeText(displayText(value));
}

function table(out: Parts, list: unknown[]): void {
  const columns: string[] = [];
  const seen = new Set<string>();
  for (const entry of list) {
    const keys = typeof entry === 'object' && entry !== null && !Array.isArray(entry) ? Object.keys(entry) : ['value'];
    for (const k of keys) {
      if (!seen.has(k)) {
        seen.add(k);
        columns.push(k);
      }
    }
  }
  out.push('<table><thead><tr>');
  for (const c of columns) out.push('<th>' + escapeText(c) + '</th>');
  out.push('</tr></thead><tbody>');
  for (const entry of list) {
    const rec =
      typeof entry === 'object' && entry !== null && !Array.isArray(entry)
        ? (entry as Record<string, unknown>)
        : undefined;
    out.push('<tr>');
    for (const c of columns)
      out.push(
        '<td>' + cell(rec ? (Object.hasOwn(rec, c) ? rec[c] : undefined) : c === 'value' ? entry : undefined) + '</td>',
      );
    out.push('</tr>');
  }
  out.push('</tbody></table>');
}

function definitions(out: Parts, response: Record<string, unknown>): void {
  out.push('<dl>');
  for (const [k, v] of Object.entries(response)) out.push('<dt>' + escapeText(k) + '</dt><dd>' + cell(v) + '</dd>');
  out.push('</dl>');
}

/** A rendered page: `own` is true for the saga's own `html` (sent with OWN_HTML_CSP or the API's). */
export interface HtmlPage {
  body: string | typeof TOO_LARGE;
  own: boolean;
}

/** Render a response as HTML; the body is TOO_LARGE once it passes `max` bytes. */
export function toHtml(response: unknown, max = Infinity): HtmlPage {
  if (typeof response !== 'object' || response === null || Array.isArray(response)) {
    return { body: renderWithin(max, (out) => out.push(HEAD + '<p>' + cell(response) + '</p>' + TAIL)), own: false };
  }
  const rec = response as Record<string, unknown>;
  const html = rec['html'];
  if (typeof html === 'string') return { body: overBudget(html, max) ? TOO_LARGE : html, own: true };
  const list = rec['list'];
  const body = renderWithin(max, (out) => {
    out.push(HEAD);
    if (Array.isArray(list)) table(out, list);
    else definitions(out, rec);
    out.push(TAIL);
  });
  return { body, own: false };
}
