import type { Format } from '../apis/saga-path.js';
import { TOO_LARGE } from './budget.js';
import { toCsv, CSV_TYPE } from './csv.js';
import { GENERATED_HTML_CSP, HTML_TYPE, OWN_HTML_CSP, toHtml } from './html.js';
import { JSON_TYPE, toJson } from './json.js';
import { TEXT_TYPE, toText } from './text.js';
import { XML_TYPE, toXml } from './xml.js';

export { negotiate, formatForAccept } from './negotiate.js';
export { TOO_LARGE } from './budget.js';
export { OWN_HTML_CSP } from './html.js';

/** A rendered response body, or undefined when the response cannot give that format. */
export interface Rendered {
  contentType: string;
  body: string;
  headers?: Record<string, string>;
}

// Constant header sets, built once: no per-response allocation for the usual policies.
const GENERATED_HEADERS = cspHeaders(GENERATED_HTML_CSP);
const OWN_HEADERS = cspHeaders(OWN_HTML_CSP);

function cspHeaders(csp: string): Record<string, string> {
  return { 'content-security-policy': csp, 'x-content-type-options': 'nosniff' };
}

function rendered(
  contentType: string,
  body: string | typeof TOO_LARGE | undefined,
): Rendered | typeof TOO_LARGE | undefined {
  return body === undefined || body === TOO_LARGE ? body : { contentType, body };
}

/**
 * Render a saga response in `format`: undefined means 406 NOT_ACCEPTABLE, TOO_LARGE that the
 * body passed `maxBytes` (502 RESPONSE_TOO_LARGE; renderers stop as soon as they are over).
 * `ownCsp` is the policy of a saga's own `html` page (the API entry's `csp`).
 */
export function render(
  format: Format,
  response: unknown,
  maxBytes = Infinity,
  ownCsp: string = OWN_HTML_CSP,
): Rendered | typeof TOO_LARGE | undefined {
  switch (format) {
    case 'json':
      return rendered(JSON_TYPE, toJson(response, maxBytes));
    case 'xml':
      return rendered(XML_TYPE, toXml(response, maxBytes));
    case 'html': {
      const page = toHtml(response, maxBytes);
      if (page.body === TOO_LARGE) return TOO_LARGE;
      const headers = !page.own ? GENERATED_HEADERS : ownCsp === OWN_HTML_CSP ? OWN_HEADERS : cspHeaders(ownCsp);
      return { contentType: HTML_TYPE, body: page.body, headers };
    }
    case 'csv':
      return rendered(CSV_TYPE, toCsv(response, maxBytes));
    case 'text':
      return rendered(TEXT_TYPE, toText(response, maxBytes));
  }
}
