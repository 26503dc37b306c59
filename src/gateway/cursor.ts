import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { SagawayError } from '../core/errors.js';

/**
 * Stream cursor tokens (DESIGN §7), the SSE `id` of every entry.
 *
 * A token names a position in the stream as "the batch that saga run with `previous` = P
 * produced, up to and including entry i". Resuming re-runs the saga with the same P and skips
 * entries 0..i, so an entry is neither lost nor repeated even when the connection broke in the
 * middle of a batch, provided the backend answers the same P with the same list. The end token
 * (`e`) marks a finished stream: presenting it again is answered 204.
 *
 * Format: base64url(JSON body) "." base64url(HMAC-SHA256(key, "v1" path caller body)). The MAC
 * binds the token to the saga path and the caller, so a token is useless on another path or to
 * another principal. The body is not secret (it holds the backend's own cursor), only unforgeable.
 */

/** A decoded position. `previous` undefined = the first batch (no `previous` sent). */
export interface CursorPosition {
  previous?: unknown;
  /** index of the last delivered entry in its batch; -1 with `end` */
  index: number;
  end: boolean;
}

/** Longest token accepted. */
export const MAX_TOKEN_LENGTH = 16_384;
const MAX_INDEX = 10_000_000;

interface Body {
  p?: unknown;
  i?: number;
  e?: 1;
}

/** Signs and verifies cursor tokens with one key. */
export class CursorCodec {
  private readonly key: Buffer;

  /** `key`: the shared `gateway.stream.cursorKey`; undefined = a random key for this process. */
  constructor(key?: string) {
    this.key = key === undefined ? randomBytes(32) : Buffer.from(key, 'utf8');
  }

  private mac(path: string, caller: string, body: string): Buffer {
    return createHmac('sha256', this.key).update(`v1\n${path}\n${caller}\n${body}`).digest();
  }

  /** A token for `position` on `path` for `caller`. */
  encode(path: string, caller: string, position: CursorPosition): string {
    const body: Body = position.end ? { e: 1 } : { i: position.index };
    if (position.previous !== undefined) body.p = position.previous;
    const b = Buffer.from(JSON.stringify(body), 'utf8').toString('base64url');
    return b + '.' + this.mac(path, caller, b).toString('base64url');
  }

  /** Decode a token presented on `path` by `caller`; INVALID_CURSOR when forged, foreign or malformed. */
  decode(path: string, caller: string, token: string): CursorPosition {
    const bad = (): SagawayError => new SagawayError('INVALID_CURSOR', 'the stream cursor is not valid here');
    if (token.length > MAX_TOKEN_LENGTH) throw bad();
    const dot = token.indexOf('.');
    if (dot <= 0) throw bad();
    const b = token.slice(0, dot);
    const sig = Buffer.from(token.slice(dot + 1), 'base64url');
    const expected = this.mac(path, caller, b);
    if (sig.length !== expected.length || !timingSafeEqual(sig, expected)) throw bad();
    let body: Body;
    try {
      body = JSON.parse(Buffer.from(b, 'base64url').toString('utf8')) as Body;
    } catch {
      throw bad();
    }
    if (typeof body !== 'object' || body === null) throw bad();
    const previous = Object.hasOwn(body, 'p') ? body.p : undefined;
    if (body.e === 1) return previous === undefined ? { index: -1, end: true } : { previous, index: -1, end: true };
    const index = body.i;
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index > MAX_INDEX) throw bad();
    return previous === undefined ? { index, end: false } : { previous, index, end: false };
  }
}
