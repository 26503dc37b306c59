import type { Dispatcher } from 'undici';
import { SagawayError } from '../../core/errors.js';

/** Reading and decoding an upstream response body, never holding more than the system's cap. */

/** A response body as undici gives it. */
export type BodyStream = Dispatcher.ResponseData['body'];

/** Drop a body we will not read; destroying it must not surface as an unhandled 'error' event. */
export function discard(body: BodyStream): void {
  body.on('error', () => undefined);
  body.destroy();
}

function tooLarge(max: number): SagawayError {
  return new SagawayError('UPSTREAM_TOO_LARGE', `upstream response exceeds ${max} bytes`, { http: 502 });
}

/** Read the whole body, stopping (and destroying the stream) as soon as it passes `max` bytes. */
export async function readLimited(
  body: BodyStream,
  contentLength: string | string[] | undefined,
  max: number,
): Promise<Buffer> {
  // an announced length over the cap is refused before a single byte is read
  if (typeof contentLength === 'string' && Number(contentLength) > max) {
    discard(body);
    throw tooLarge(max);
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    total += chunk.byteLength;
    if (total > max) {
      discard(body);
      throw tooLarge(max);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, total);
}

/** Whether a content type is JSON: application/json, text/json or any `+json` suffix. */
export function isJsonType(contentType: string | string[] | undefined): boolean {
  if (typeof contentType !== 'string') return false;
  const type = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  return type === 'application/json' || type === 'text/json' || type.endsWith('+json');
}

function charsetOf(contentType: string | string[] | undefined): string {
  if (typeof contentType !== 'string') return 'utf-8';
  const m = /;\s*charset\s*=\s*"?([\w.-]+)"?/i.exec(contentType);
  return m?.[1] ?? 'utf-8';
}

/** The body as the action's output: parsed JSON for JSON types, else text; null when empty. */
export function parseBody(bytes: Buffer, contentType: string | string[] | undefined): unknown {
  if (bytes.byteLength === 0) return null;
  if (isJsonType(contentType)) {
    try {
      return JSON.parse(bytes.toString('utf8')) as unknown;
    } catch {
      throw new SagawayError('UPSTREAM_ERROR', 'upstream sent invalid JSON', { http: 502 });
    }
  }
  try {
    return new TextDecoder(charsetOf(contentType)).decode(bytes);
  } catch {
    return bytes.toString('utf8'); // an unknown charset label: read as UTF-8 rather than fail
  }
}
