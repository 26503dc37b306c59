/**
 * What the console never shows (docs/console.md, Masking): values under a key that names a
 * credential or personal secret, and values that are one whatever their key (a JWT, a card
 * number). Defence in depth: secrets never reach payloads, but a caller's own password, PIN or
 * card does. Everything is compiled once per process; a key's answer is cached, since payloads
 * repeat the same few keys.
 */

/** The text that replaces a masked value. */
export const MASK = '••••';

/** Parts masked wherever they appear in a key (case and `-`/`_`/`.` ignored): no common word holds them. */
const ANYWHERE = [
  'password',
  'passwd',
  'passphrase',
  'passcode',
  'secret',
  'token',
  'session',
  'cookie',
  'credential',
  'apikey',
  'privatekey',
  'accesskey',
  'authoriz',
  'creditcard',
  'cardnumber',
  'cvv',
];

/**
 * Short parts masked when they are a word of the key (`userPin`, `otp_code`, `X-Api-Key`,
 * `cardNumber`, `PW`), plural included: anywhere, they would mask `passenger`, `shipping`,
 * `footprint`, `monkey`, `author` and `classname`.
 */
const WORDS = ['pass', 'pw', 'pin', 'otp', 'key', 'ssn', 'cvc', 'card', 'auth'];

/** Keys whose answer is cached at most; past it the cache starts again (a payload of unique keys). */
const CACHE_SIZE = 4096;
/** Longest key cached (a client's key may be long: the cache must not keep megabytes). */
const CACHED_KEY_LENGTH = 64;
/** Characters of a key a configured regular expression is tested on (a bound on its cost). */
const REGEX_KEY_LENGTH = 256;
/** Characters of a string searched for a JWT or a card number when no budget says less. */
const VALUE_SCAN = 4096;

/** A JWT (JWS or JWE): base64url of a JSON header and payload, both starting `{"`. */
const JWT = /eyJ[\w-]+\.eyJ[\w-]+\./;
/** 13 to 19 digits, single spaces or dashes between them, not inside a longer number. */
const CARD_DIGITS = /(?<!\d)\d(?:[ -]?\d){12,18}(?!\d)/g;

/** Decides what is masked: the built-in parts plus a configuration's own (`gateway.console.mask`). */
export interface Masker {
  /** Whether the value under this key is masked. */
  key(name: string): boolean;
  /** Whether a value is masked whatever its key (a JWT or a card number in the first `scan` characters). */
  value(value: unknown, scan?: number): boolean;
}

/**
 * A masker with `extra` patterns: a plain entry is a part matched anywhere in the key (case and
 * `-`/`_`/`.` ignored), `/.../` a regular expression tested on the key as written (case-insensitive).
 * Entries are checked at load (`maskPatternIssue`); a bad one here throws.
 */
export function compileMasker(extra: readonly string[] = []): Masker {
  const parts = [...ANYWHERE];
  const expressions: RegExp[] = [];
  for (const entry of extra) {
    if (isRegexEntry(entry)) expressions.push(new RegExp(entry.slice(1, -1), 'i'));
    else parts.push(squash(entry));
  }
  const anywhere = new RegExp(parts.map(escape).join('|'));
  const word = new RegExp(`(?:^|_)(?:${WORDS.join('|')})s?(?:_|$)`);
  const cache = new Map<string, boolean>();
  const decide = (name: string): boolean =>
    anywhere.test(squash(name)) ||
    word.test(words(name)) ||
    expressions.some((re) => re.test(name.length > REGEX_KEY_LENGTH ? name.slice(0, REGEX_KEY_LENGTH) : name));
  return {
    key(name) {
      if (name.length > CACHED_KEY_LENGTH) return decide(name);
      let hit = cache.get(name);
      if (hit === undefined) {
        hit = decide(name);
        if (cache.size >= CACHE_SIZE) cache.clear();
        cache.set(name, hit);
      }
      return hit;
    },
    value(value, scan = VALUE_SCAN) {
      if (typeof value === 'number') return value >= 1e12 && Number.isSafeInteger(value) && isCardNumber(String(value));
      if (typeof value !== 'string' || value.length < 13) return false;
      const text = value.length > scan ? value.slice(0, scan) : value;
      return JWT.test(text) || hasCardNumber(text);
    },
  };
}

/** The masker without extra patterns. */
export const DEFAULT_MASKER: Masker = compileMasker();

/** Why a `gateway.console.mask` entry cannot be used, or undefined when it can. */
export function maskPatternIssue(entry: string): string | undefined {
  if (!isRegexEntry(entry)) return squash(entry) === '' ? 'an entry needs a letter or a digit' : undefined;
  try {
    new RegExp(entry.slice(1, -1), 'i');
    return undefined;
  } catch (err) {
    return `not a regular expression: ${(err as Error).message}`;
  }
}

function isRegexEntry(entry: string): boolean {
  return entry.length > 2 && entry.startsWith('/') && entry.endsWith('/');
}

/** Lower case without separators: `X-Api-Key` → `xapikey`. */
function squash(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]/g, '');
}

/** Lower-case words joined by `_`: `userPIN` → `user_pin`, `APIKey` → `api_key`, `otp-code2` → `otp_code_2`. */
function words(name: string): string {
  return name
    .replace(/([a-z])([A-Z])/g, '$1_$2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1_$2')
    .replace(/([A-Za-z])(\d)/g, '$1_$2')
    .replace(/(\d)([A-Za-z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_');
}

function escape(part: string): string {
  return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function hasCardNumber(text: string): boolean {
  CARD_DIGITS.lastIndex = 0;
  for (let m = CARD_DIGITS.exec(text); m !== null; m = CARD_DIGITS.exec(text)) {
    if (isCardNumber(m[0].replace(/[ -]/g, ''))) return true;
  }
  return false;
}

/**
 * 13 to 19 digits starting 2 to 6 (the card networks' ranges; epoch milliseconds start with 1)
 * that pass the Luhn check.
 */
function isCardNumber(digits: string): boolean {
  if (digits.length < 13 || digits.length > 19 || digits < '2' || digits >= '7') return false;
  let sum = 0;
  for (let i = digits.length - 1, double = false; i >= 0; i--, double = !double) {
    let d = digits.charCodeAt(i) - 48;
    if (double) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}
