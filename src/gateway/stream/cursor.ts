import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { keepBounded } from '../../core/bounded-map.js';
import { SagawayError } from '../../core/errors.js';

/**
 * Stream cursor tokens (DESIGN §7), the SSE `id` of every entry.
 *
 * A token names a position in the stream as "the batch that the saga run with `previous` = P
 * produced, up to and including entry i". Resuming re-runs the saga with the same P and skips
 * entries 0..i, so an entry is neither lost nor repeated even when the connection broke in the
 * middle of a batch, provided the backend answers the same P with the same list. The end token
 * (`e`) marks a finished stream: presenting it again is answered 204. The start token (`s`) names
 * the start of a batch, none of whose entries were delivered yet: the offset a long-poll answer
 * gives after a complete batch (long-poll.ts), and the id a lifetime close leaves (member.ts).
 *
 * Format: `A.B.M` where A = base64url(JSON `{"p":P}`, or `{}` for the first batch), B = the
 * index in decimal, `e` or `s`, and M = a 128-bit tag, base64url. The batch key is
 * K = HMAC-SHA256(key, "v2" path caller A), which binds every token to the saga path, the
 * caller and the batch, so a token is useless on another path or to another principal. Tags come
 * from HKDF-Expand(K): entry i's tag is the i-th 16-byte block of HKDF(K, info = "c" + i / 500)
 * and the end and start tags are HKDF(K, info = "e" / "s"); index and markers are covered too. HKDF's output is
 * a PRF of (K, info, position), and one native call yields the tags of up to 500 entries, instead
 * of one HMAC call per entry (which cost a third of the CPU of a busy stream). A is not secret
 * (it holds the backend's own cursor), only unforgeable.
 */

/** A decoded position. `previous` undefined = the first batch (no `previous` sent). */
export interface CursorPosition {
  previous?: unknown;
  /** index of the last delivered entry in its batch; -1 with `end`, and for the start of a batch (`s`) */
  index: number;
  end: boolean;
}

/** Signs the tokens of one batch. */
export interface BatchTokens {
  /** the token of entry `index` */
  entry(index: number): string;
  /** the final token, for `event: end` */
  end(): string;
  /** the token of the batch's start (none of its entries delivered): a long-poll offset, a lifetime close's id */
  start(): string;
}

/** Longest token accepted. */
export const MAX_TOKEN_LENGTH = 16_384;
/**
 * Longest `next` (as JSON) a stream saga may answer. Every event id of the following batch
 * carries it (base64url, 4/3 larger), so a large `next` would multiply into every event and make
 * tokens that a resume refuses (MAX_TOKEN_LENGTH); 4 KB is far above any real cursor.
 */
export const MAX_NEXT_JSON = 4096;
const MAX_INDEX = 10_000_000;
const TAG = 16;
/** Tags per HKDF call: HKDF-SHA256 yields at most 255 * 32 bytes. */
const PER_CALL = 500;
const NO_SALT = Buffer.alloc(0);
const FIRST_BATCH = Buffer.from('{}').toString('base64url');
const INDEX = /^(?:0|[1-9][0-9]{0,7})$/;
/**
 * Verified tokens remembered (decode): every long-poll client at one position of a shared feed
 * presents the same offset, and verifying it (an HMAC and an HKDF call) was ~15 µs of each
 * request. At most VERIFIED tokens of at most VERIFIED_LENGTH characters are kept (~1 MB), the
 * oldest forgotten first; a hit needs the same path, binding and token, character for character.
 */
const VERIFIED = 1024;
const VERIFIED_LENGTH = 1024;

/** What decode remembers of a verified token: its position, with `previous` as JSON (parsed per hit: callers own it). */
interface Verified {
  index: number;
  end: boolean;
  json: string;
}

/** Signs and verifies cursor tokens with one key. */
export class CursorCodec {
  private readonly key: Buffer;
  private readonly verified = new Map<string, Verified>();

  /** `key`: the shared `gateway.stream.cursorKey`; undefined = a random key for this process. */
  constructor(key?: string) {
    this.key = key === undefined ? randomBytes(32) : Buffer.from(key, 'utf8');
  }

  private batchKey(path: string, caller: string, a: string): Buffer {
    return createHmac('sha256', this.key).update(`v2\n${path}\n${caller}\n${a}`).digest();
  }

  /** `count` tags of chunk `chunk` of a batch (the first `count` blocks of its HKDF output). */
  private static tags(batchKey: Buffer, info: string, count: number): Buffer {
    return Buffer.from(hkdfSync('sha256', batchKey, NO_SALT, info, TAG * count));
  }

  /** The token signer of the batch that `previous` produced on `path` for `caller`; `count` = entries expected. */
  batch(path: string, caller: string, previous: unknown, count = 1): BatchTokens {
    const a =
      previous === undefined ? FIRST_BATCH : Buffer.from(JSON.stringify({ p: previous }), 'utf8').toString('base64url');
    const k = this.batchKey(path, caller, a);
    const chunks: Buffer[] = [];
    return {
      entry: (index) => {
        const c = Math.floor(index / PER_CALL);
        const at = index % PER_CALL;
        let tags = chunks[c];
        if (tags === undefined || tags.length < TAG * (at + 1)) {
          tags = CursorCodec.tags(k, `c${c}`, Math.max(at + 1, Math.min(PER_CALL, count - c * PER_CALL)));
          chunks[c] = tags;
        }
        return `${a}.${index}.${tags.subarray(TAG * at, TAG * (at + 1)).toString('base64url')}`;
      },
      end: () => `${a}.e.${CursorCodec.tags(k, 'e', 1).toString('base64url')}`,
      start: () => `${a}.s.${CursorCodec.tags(k, 's', 1).toString('base64url')}`,
    };
  }

  /** A token for `position` (one-off; loops use `batch`). */
  encode(path: string, caller: string, position: CursorPosition): string {
    const b = this.batch(path, caller, position.previous, position.index + 1);
    return position.end ? b.end() : position.index < 0 ? b.start() : b.entry(position.index);
  }

  /** Decode a token presented on `path` by `caller`; INVALID_CURSOR when forged, foreign or malformed. */
  decode(path: string, caller: string, token: string): CursorPosition {
    // The key gives the lengths of path and caller, so that no path, caller and token (each of
    // them any text: a path may hold %0A) can spell another's key.
    const memo =
      token.length <= VERIFIED_LENGTH ? `${path.length}:${caller.length}:${path}${caller}${token}` : undefined;
    const known = memo === undefined ? undefined : this.verified.get(memo);
    const v = known ?? this.verify(path, caller, token);
    if (memo !== undefined && known === undefined) {
      keepBounded(this.verified, memo, v, VERIFIED);
    }
    const body = JSON.parse(v.json) as { p?: unknown };
    const previous = Object.hasOwn(body, 'p') ? body.p : undefined;
    return previous === undefined ? { index: v.index, end: v.end } : { previous, index: v.index, end: v.end };
  }

  /** Check a token's tag and body (decode, when it is not remembered). */
  private verify(path: string, caller: string, token: string): Verified {
    const bad = (): SagawayError => new SagawayError('INVALID_CURSOR', 'the stream cursor is not valid here');
    if (token.length > MAX_TOKEN_LENGTH) throw bad();
    const parts = token.split('.');
    if (parts.length !== 3) throw bad();
    const [a, b, m] = parts as [string, string, string];
    const end = b === 'e';
    const start = b === 's';
    if (a === '' || (!end && !start && !INDEX.test(b))) throw bad();
    const index = end || start ? -1 : Number(b);
    if (index > MAX_INDEX) throw bad();
    const k = this.batchKey(path, caller, a);
    const at = index % PER_CALL;
    const expected =
      end || start
        ? CursorCodec.tags(k, b, 1)
        : CursorCodec.tags(k, `c${Math.floor(index / PER_CALL)}`, at + 1).subarray(TAG * at);
    const tag = Buffer.from(m, 'base64url');
    if (tag.length !== TAG || !timingSafeEqual(tag, expected)) throw bad();
    // base64url leaves spare bits in the last character, and Node's decoder ignores them (and any
    // character outside the alphabet): only the one canonical spelling of a tag is its token.
    if (tag.toString('base64url') !== m) throw bad();
    const json = Buffer.from(a, 'base64url').toString('utf8');
    let body: unknown;
    try {
      body = JSON.parse(json);
    } catch {
      throw bad();
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw bad();
    return { index, end, json };
  }
}
