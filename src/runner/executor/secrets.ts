import { readFileSync } from 'node:fs';
import type { SecretsSettings } from '../../config/settings.js';
import { SagawayError } from '../../core/errors.js';
import { isObject } from '../../core/path.js';

/** Where `#{{NAME}}` placeholders get their values. */
export interface SecretSource {
  get(name: string): string | undefined;
}

const MAX_SECRETS_FILE = 1024 * 1024;

/**
 * Secrets come from the environment (`PREFIX` + NAME, read at each use so rotated values apply)
 * or from a JSON file of `{ NAME: "value" }` read once at start.
 */
export function createSecretSource(settings: SecretsSettings, env: NodeJS.ProcessEnv = process.env): SecretSource {
  if (settings.from === 'env') {
    const prefix = settings.prefix;
    return { get: (name) => env[prefix + name] };
  }
  if (settings.from === 'file') {
    let data: Record<string, unknown>;
    try {
      const text = readFileSync(settings.file, 'utf8');
      if (text.length > MAX_SECRETS_FILE) throw new Error('secrets file too large');
      const parsed: unknown = JSON.parse(text);
      if (!isObject(parsed)) throw new Error('secrets file must hold a JSON object');
      data = parsed;
    } catch (e) {
      // The message names the problem, never a value from the file.
      throw new SagawayError('CONFIG_INVALID', `cannot read secrets file: ${(e as Error).message.split('\n')[0]}`);
    }
    return {
      get: (name) => (Object.hasOwn(data, name) && typeof data[name] === 'string' ? (data[name] as string) : undefined),
    };
  }
  return { get: () => undefined };
}

/** Replace every occurrence of the given secret values in text. */
export function scrubText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length > 0) out = out.split(s).join('[REDACTED]');
  return out;
}

/** Replace secret values inside any JSON value (strings, keys and all). */
export function scrubValue<T>(value: T, secrets: readonly string[]): T {
  if (secrets.length === 0 || value === undefined) return value;
  const text = JSON.stringify(value);
  if (text === undefined || !secrets.some((s) => text.includes(s) || text.includes(JSON.stringify(s).slice(1, -1))))
    return value;
  // Escape as JSON would, so a secret with quotes or backslashes is found inside the JSON text.
  return JSON.parse(
    scrubText(
      text,
      secrets.map((s) => JSON.stringify(s).slice(1, -1)),
    ),
  ) as T;
}
