import { renderWithin, type Parts, type TOO_LARGE } from './budget.js';
import { escapeText } from './escape.js';

/**
 * XML format (DESIGN §8): the response inside `<root>`, one element per key, array items as
 * repeated `<item>`. Keys that are not valid XML names are sanitised: invalid characters become
 * `_`, a name that does not start with a letter or `_` (or starts with `xml`) gets a `_` prefix.
 */

/** Media type of the XML format. */
export const XML_TYPE = 'application/xml; charset=utf-8';

const NAME_INVALID = /[^A-Za-z0-9_.-]/g;
const NAME_START = /^[A-Za-z_]/;
const XML_PREFIX = /^xml/i;

/** A valid XML element name for a JSON key. */
export function xmlName(key: string): string {
  let name = key.replace(NAME_INVALID, '_');
  if (name === '' || !NAME_START.test(name) || XML_PREFIX.test(name)) name = '_' + name;
  return name;
}

function write(out: Parts, name: string, value: unknown): void {
  if (value === null || value === undefined) {
    out.push(`<${name}/>`);
  } else if (Array.isArray(value)) {
    out.push(`<${name}>`);
    for (const item of value) write(out, 'item', item);
    out.push(`</${name}>`);
  } else if (typeof value === 'object') {
    out.push(`<${name}>`);
    for (const [k, v] of Object.entries(value)) write(out, xmlName(k), v);
    out.push(`</${name}>`);
  } else {
    out.push(`<${name}>` + escapeText(String(value)) + `</${name}>`);
  }
}

/** Serialise a response as an XML document; TOO_LARGE once it passes `max` bytes. */
export function toXml(response: unknown, max = Infinity): string | typeof TOO_LARGE {
  return renderWithin(max, (out) => {
    out.push('<?xml version="1.0" encoding="UTF-8"?>');
    write(out, 'root', response ?? {});
  });
}
