import { createHash, timingSafeEqual } from 'node:crypto';
import type { ApiKeySettings } from '../../config/settings.js';

/**
 * API keys are stored as SHA-256 hex digests in the config; a presented key is hashed and
 * compared with every stored digest in constant time (no early exit, so the timing does not tell
 * which entry came close).
 */

/** A configured key in comparable form. */
interface StoredKey {
  readonly settings: ApiKeySettings;
  readonly digest: Buffer;
}

/** Checks presented API keys. */
export class ApiKeyStore {
  private readonly keys: StoredKey[];

  constructor(keys: readonly ApiKeySettings[]) {
    this.keys = keys.map((k) => ({ settings: k, digest: Buffer.from(k.sha256.toLowerCase(), 'hex') }));
  }

  /** Whether any key is configured. */
  get size(): number {
    return this.keys.length;
  }

  /** The settings of the key `presented`, or undefined. */
  find(presented: string): ApiKeySettings | undefined {
    const digest = createHash('sha256').update(presented, 'utf8').digest();
    let found: ApiKeySettings | undefined;
    for (const key of this.keys) {
      if (key.digest.length === digest.length && timingSafeEqual(key.digest, digest) && found === undefined) {
        found = key.settings;
      }
    }
    return found;
  }
}
