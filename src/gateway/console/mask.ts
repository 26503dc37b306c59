import { isForbiddenKey, isObject } from '../../core/path.js';
import { isSensitiveKey, MASK } from '../../core/trace.js';

/**
 * Settings as the console shows them. Placeholders (`#{{SECRET}}`, `${{VALUE}}`, `%%var%%`) are
 * shown as written and never resolved: the console has no secret to show. Values under a key that
 * names a credential (`password`, `token`, `authorization`, `apiKey`, ...) are masked whatever
 * they hold, since a literal written there would be one.
 */
export function masked(value: unknown, key = '', depth = 0): unknown {
  if (key !== '' && isSensitiveKey(key)) return MASK;
  if (depth > 16) return '…';
  if (Array.isArray(value)) return value.slice(0, 100).map((v) => masked(v, '', depth + 1));
  if (isObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (!isForbiddenKey(k)) out[k] = masked(v, k, depth + 1);
    return out;
  }
  return value;
}
