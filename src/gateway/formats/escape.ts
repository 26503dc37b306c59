/** Escaping shared by the HTML and XML formats. */

const ENTITIES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
const SPECIAL = /[&<>"']/g;
// Characters XML 1.0 cannot carry at all (C0 controls but tab/LF/CR, lone surrogates, U+FFFE/F).
/* eslint-disable no-control-regex -- these control characters are exactly what must go */
const INVALID_XML_CHARS =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
/* eslint-enable no-control-regex */

/** Escape text for HTML or XML element content and attribute values; removes characters XML forbids. */
export function escapeText(text: string): string {
  return text.replace(INVALID_XML_CHARS, '\uFFFD').replace(SPECIAL, (c) => ENTITIES[c]!);
}

/** A JSON value as display text: strings as they are, null/undefined empty, others as JSON. */
export function displayText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value) ?? '';
}
