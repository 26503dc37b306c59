import type { HttpSystemSettings } from '../../config/settings.js';
import { SagawayError } from '../../core/errors.js';
import { isForbiddenKey } from '../../core/path.js';
import { SsrfBlockedError } from './address-policy.js';

/**
 * Turns CallRest parameters and input into one outgoing request, refusing anything that could
 * leave the system's origin or smuggle a header. Error messages name parameters and header
 * names, never header values (they often hold injected secrets).
 */

/** An outgoing request, ready for the client. */
export interface RestRequest {
  method: string;
  url: URL;
  /** lower-case names */
  headers: Record<string, string>;
  body?: string;
}

/** Methods CallRest sends; CONNECT and TRACE are never sent. */
export const METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Headers a caller may not set: hop-by-hop, routing and framing headers are the client's business. */
export const REFUSED_HEADERS: ReadonlySet<string> = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'content-length',
  'expect',
  'http2-settings',
]);

/** Largest request body sent, in bytes (16 MiB); the payload is already bounded by the gateway. */
const MAX_REQUEST_BODY = 16 * 1024 * 1024;
/** At most this many query parameters or headers. */
const MAX_ENTRIES = 100;

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// eslint-disable-next-line no-control-regex
const BAD_VALUE = /[\u0000\r\n]/;
// eslint-disable-next-line no-control-regex
const BAD_PATH = /[\u0000-\u001f\u007f\\#?]/;
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

function invalid(message: string): SagawayError {
  return new SagawayError('VALIDATION_FAILED', message, { http: 400 });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `baseUrl` + `path` + `query`, refusing a path that would change the origin or climb out of the base path. */
export function buildUrl(baseUrl: string, path: unknown, query: unknown): URL {
  const base = new URL(baseUrl);
  if (path !== undefined && typeof path !== 'string') throw invalid('parameters.path must be a string');
  const p = path ?? '';
  if (p.length > 8192) throw invalid('parameters.path is too long');
  // "?" too: a value injected into the path (`/items/%%id%%`) must not be able to add query
  // parameters; queries go through parameters.query, where every value is encoded
  if (BAD_PATH.test(p))
    throw invalid('parameters.path must not contain control characters, "\\", "?" or "#" (use parameters.query)');
  // an absolute URL, a scheme change or a network-path reference ("//host") would leave the system
  if (SCHEME.test(p) || p.startsWith('//')) throw new SsrfBlockedError('path-origin');
  // a loop, not /\/+$/: that regex is quadratic on a long run of "/" that does not end the path
  let end = base.pathname.length;
  while (end > 0 && base.pathname.charCodeAt(end - 1) === 0x2f) end--;
  const basePath = base.pathname.slice(0, end);
  const rel = p === '' || p.startsWith('/') ? p : `/${p}`;
  const url = new URL(basePath + rel, base.origin);
  // "..", "%2e%2e" and friends are resolved by the parser; the result must stay under the base path
  if (url.origin !== base.origin) throw new SsrfBlockedError('path-origin');
  if (basePath !== '' && url.pathname !== basePath && !url.pathname.startsWith(`${basePath}/`)) {
    throw new SsrfBlockedError('path-escape');
  }
  const params = new URLSearchParams(base.search);
  appendQuery(params, query);
  const search = params.toString();
  url.search = search === '' ? '' : `?${search}`;
  return url;
}

function scalar(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'boolean') return String(value);
  return undefined;
}

function appendQuery(params: URLSearchParams, query: unknown): void {
  if (query === undefined || query === null) return;
  if (!isPlainObject(query)) throw invalid('parameters.query must be an object');
  const entries = Object.entries(query);
  if (entries.length > MAX_ENTRIES) throw invalid('parameters.query has too many entries');
  for (const [key, value] of entries) {
    if (value === undefined || value === null) continue;
    const values = Array.isArray(value) ? value : [value];
    for (const v of values) {
      const s = scalar(v);
      if (s === undefined)
        throw invalid(`parameters.query.${key} must be a string, number, boolean or an array of them`);
      params.append(key, s);
    }
  }
}

/** The system's default headers with the parameter headers over them, names lower-cased and checked. */
export function buildHeaders(
  systemHeaders: Readonly<Record<string, string>>,
  headers: unknown,
): Record<string, string> {
  if (headers !== undefined && headers !== null && !isPlainObject(headers))
    throw invalid('parameters.headers must be an object');
  const out: Record<string, string> = {};
  const add = (name: string, value: unknown, where: string): void => {
    if (value === undefined || value === null) return;
    if (!TOKEN.test(name)) throw invalid(`${where}: "${name.slice(0, 64)}" is not a valid header name`);
    const lower = name.toLowerCase();
    if (REFUSED_HEADERS.has(lower) || isForbiddenKey(lower))
      throw invalid(`${where}: the header "${lower}" may not be set`);
    const s = scalar(value);
    if (s === undefined) throw invalid(`${where}: the value of "${lower}" must be a string or number`);
    if (BAD_VALUE.test(s)) throw invalid(`${where}: the value of "${lower}" holds a line break or NUL`);
    out[lower] = s;
  };
  for (const [name, value] of Object.entries(systemHeaders)) add(name, value, 'system headers');
  const entries = Object.entries(headers ?? {});
  if (entries.length > MAX_ENTRIES) throw invalid('parameters.headers has too many entries');
  for (const [name, value] of entries) add(name, value, 'parameters.headers');
  return out;
}

/** Serialise the body: strings as text, form objects url-encoded, anything else as JSON. */
function buildBody(value: unknown, headers: Record<string, string>): string | undefined {
  if (value === undefined) return undefined;
  const type = headers['content-type']?.toLowerCase() ?? '';
  let body: string;
  if (typeof value === 'string') {
    body = value;
    if (!type) headers['content-type'] = 'text/plain; charset=utf-8';
  } else if (type.startsWith('application/x-www-form-urlencoded') && isPlainObject(value)) {
    const form = new URLSearchParams();
    appendQuery(form, value);
    body = form.toString();
  } else {
    body = JSON.stringify(value) ?? 'null';
    if (!type) headers['content-type'] = 'application/json';
  }
  if (Buffer.byteLength(body) > MAX_REQUEST_BODY) throw invalid('the request body is too large');
  return body;
}

/** The request CallRest sends for these parameters and input on this system. */
export function buildRequest(
  system: HttpSystemSettings,
  parameters: Record<string, unknown>,
  input: unknown,
): RestRequest {
  const rawMethod = parameters['method'] ?? 'GET';
  const method = typeof rawMethod === 'string' ? rawMethod.toUpperCase() : '';
  if (!METHODS.has(method)) throw invalid(`parameters.method must be one of ${[...METHODS].join(', ')}`);
  const url = buildUrl(system.baseUrl, parameters['path'], parameters['query']);
  const headers = buildHeaders(system.headers, parameters['headers']);
  headers['accept'] ??= 'application/json, text/*;q=0.9, */*;q=0.5';
  headers['user-agent'] ??= 'sagaway';
  const hasBodyParam = Object.hasOwn(parameters, 'body') && parameters['body'] !== undefined;
  if (method === 'GET' || method === 'HEAD') {
    if (hasBodyParam) throw invalid(`parameters.body is not allowed with ${method}`);
    return { method, url, headers };
  }
  const body = buildBody(hasBodyParam ? parameters['body'] : input, headers);
  return body === undefined ? { method, url, headers } : { method, url, headers, body };
}
