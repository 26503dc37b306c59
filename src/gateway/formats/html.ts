import { displayText, escapeText } from './escape.js';

/**
 * HTML format (DESIGN §8): the response's `html` field as the saga wrote it (the saga's own
 * page), else a table of `list`, else a definition list of the response. Generated pages escape
 * every piece of data and are sent with a Content-Security-Policy that forbids scripts.
 */

/** Media type of the HTML format. */
export const HTML_TYPE = 'text/html; charset=utf-8';
/** CSP of generated pages: no scripts, no external loads, inline styles only. */
export const GENERATED_HTML_CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

const HEAD =
  '<!doctype html><html><head><meta charset="utf-8"><title>sagaway</title>' +
  '<style>table,td,th{border:1px solid #ccc;border-collapse:collapse;padding:4px}dt{font-weight:bold}</style></head><body>';
const TAIL = '</body></html>';

function cell(value: unknown): string {
  return escapeText(displayText(value));
}

function table(list: unknown[]): string {
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
  const out = ['<table><thead><tr>'];
  for (const c of columns) out.push('<th>', escapeText(c), '</th>');
  out.push('</tr></thead><tbody>');
  for (const entry of list) {
    const rec =
      typeof entry === 'object' && entry !== null && !Array.isArray(entry)
        ? (entry as Record<string, unknown>)
        : undefined;
    out.push('<tr>');
    for (const c of columns)
      out.push(
        '<td>',
        cell(rec ? (Object.hasOwn(rec, c) ? rec[c] : undefined) : c === 'value' ? entry : undefined),
        '</td>',
      );
    out.push('</tr>');
  }
  out.push('</tbody></table>');
  return out.join('');
}

function definitions(response: Record<string, unknown>): string {
  const out = ['<dl>'];
  for (const [k, v] of Object.entries(response)) out.push('<dt>', escapeText(k), '</dt><dd>', cell(v), '</dd>');
  out.push('</dl>');
  return out.join('');
}

/** A rendered page: `own` is true for the saga's own `html` (sent without our CSP). */
export interface HtmlPage {
  body: string;
  own: boolean;
}

/** Render a response as HTML. */
export function toHtml(response: unknown): HtmlPage {
  if (typeof response !== 'object' || response === null || Array.isArray(response)) {
    return { body: HEAD + '<p>' + cell(response) + '</p>' + TAIL, own: false };
  }
  const rec = response as Record<string, unknown>;
  if (typeof rec['html'] === 'string') return { body: rec['html'], own: true };
  if (Array.isArray(rec['list'])) return { body: HEAD + table(rec['list']) + TAIL, own: false };
  return { body: HEAD + definitions(rec) + TAIL, own: false };
}
