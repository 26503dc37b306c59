import type { Format } from '../saga-path.js';
import { toCsv, CSV_TYPE } from './csv.js';
import { GENERATED_HTML_CSP, HTML_TYPE, toHtml } from './html.js';
import { JSON_TYPE, toJson } from './json.js';
import { TEXT_TYPE, toText } from './text.js';
import { XML_TYPE, toXml } from './xml.js';

export { negotiate, formatForAccept } from './negotiate.js';

/** A rendered response body, or undefined when the response cannot give that format. */
export interface Rendered {
  contentType: string;
  body: string;
  headers?: Record<string, string>;
}

/** Render a saga response in `format`; undefined means 406 NOT_ACCEPTABLE. */
export function render(format: Format, response: unknown): Rendered | undefined {
  switch (format) {
    case 'json':
      return { contentType: JSON_TYPE, body: toJson(response) };
    case 'xml':
      return { contentType: XML_TYPE, body: toXml(response) };
    case 'html': {
      const page = toHtml(response);
      return page.own
        ? { contentType: HTML_TYPE, body: page.body }
        : { contentType: HTML_TYPE, body: page.body, headers: { 'content-security-policy': GENERATED_HTML_CSP } };
    }
    case 'csv': {
      const body = toCsv(response);
      return body === undefined ? undefined : { contentType: CSV_TYPE, body };
    }
    case 'text': {
      const body = toText(response);
      return body === undefined ? undefined : { contentType: TEXT_TYPE, body };
    }
  }
}
