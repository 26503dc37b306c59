/**
 * The saga path of a request: the URL path after `/api/request` or `/api/stream`, decoded one
 * segment at a time. Empty segments are dropped (`//a` is `/a`); dot segments and encoded
 * slashes are refused, so a path can never climb out of the API it was matched against.
 */

/** Which form a route serves. */
export type Form = 'request' | 'stream';

/** The URL prefix of each form. */
export const FORM_PREFIX: Readonly<Record<Form, string>> = { request: '/api/request', stream: '/api/stream' };

/** Format extensions of the one-shot form (DESIGN §8). */
export const FORMAT_EXTENSIONS = { json: 'json', xml: 'xml', html: 'html', csv: 'csv', txt: 'text' } as const;

/** A response format. */
export type Format = 'json' | 'xml' | 'html' | 'csv' | 'text';

/** A parsed saga path. */
export interface SagaPath {
  /** `/a/b`, `/` for the root */
  path: string;
  segments: string[];
  /** format named by an extension of the last segment (one-shot form only) */
  extension?: Format;
}

/** Longest raw path accepted; longer ones are refused as not found. */
const MAX_PATH = 2048;

/**
 * Parse the path part of `url` after `prefix` (which the router already matched); undefined when
 * the path is malformed. `withExtension` strips and reports a format extension.
 */
export function parseSagaPath(url: string, prefix: string, withExtension: boolean): SagaPath | undefined {
  const q = url.indexOf('?');
  const raw = q < 0 ? url.slice(prefix.length) : url.slice(prefix.length, q);
  if (raw.length > MAX_PATH) return undefined;
  // The common path (`/items/42`): no escapes, no dots, no empty segments; read as it is.
  if (
    raw.length > 1 &&
    raw.charCodeAt(0) === 47 && // '/'
    raw.charCodeAt(raw.length - 1) !== 47 &&
    !raw.includes('%') &&
    !raw.includes('.') &&
    !raw.includes('//')
  ) {
    return { path: raw, segments: raw.slice(1).split('/') };
  }
  const segments: string[] = [];
  for (const part of raw.split('/')) {
    if (part === '') continue;
    let seg = part;
    if (part.includes('%')) {
      try {
        seg = decodeURIComponent(part);
      } catch {
        return undefined;
      }
      if (seg.includes('/') || seg.includes('\0')) return undefined;
    }
    if (seg === '.' || seg === '..') return undefined;
    segments.push(seg);
  }
  let extension: Format | undefined;
  if (withExtension && segments.length > 0) {
    const last = segments[segments.length - 1]!;
    const dot = last.lastIndexOf('.');
    if (dot > 0) {
      const ext = last.slice(dot + 1).toLowerCase();
      if (Object.hasOwn(FORMAT_EXTENSIONS, ext)) {
        extension = FORMAT_EXTENSIONS[ext as keyof typeof FORMAT_EXTENSIONS];
        segments[segments.length - 1] = last.slice(0, dot);
      }
    }
  }
  const path = '/' + segments.join('/');
  return extension === undefined ? { path, segments } : { path, segments, extension };
}
