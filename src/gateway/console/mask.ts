import { isForbiddenKey, isObject } from '../../core/path.js';
import { compileMasker, DEFAULT_MASKER, MASK, type Masker } from '../../core/sensitive.js';

/**
 * Settings as the console shows them. Placeholders (`#{{SECRET}}`, `${{VALUE}}`, `%%var%%`) are
 * shown as written and never resolved: the console has no secret to show. Values under a key that
 * names a credential (`password`, `token`, `authorization`, `apiKey`, `pin`, ...; docs/console.md,
 * Masking) are masked whatever they hold, since a literal written there would be one; so are
 * values that look like a JWT or a card number.
 */
export function masked(value: unknown, masker: Masker = DEFAULT_MASKER, key = '', depth = 0): unknown {
  if ((key !== '' && masker.key(key)) || masker.value(value)) return MASK;
  if (depth > 16) return '…';
  if (Array.isArray(value)) return value.slice(0, 100).map((v) => masked(v, masker, '', depth + 1));
  if (isObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (!isForbiddenKey(k)) out[k] = masked(v, masker, k, depth + 1);
    return out;
  }
  return value;
}

/** What a runner publishes for a console over NATS, masked with the configured `gateway.console.mask` too. */
export function traceMasker(settings: {
  gateway: { console: { mask: readonly string[] } };
}): (value: unknown) => unknown {
  const masker = compileMasker(settings.gateway.console.mask);
  return (value) => masked(value, masker);
}
