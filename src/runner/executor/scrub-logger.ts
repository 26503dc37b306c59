import type { Logger } from '../../core/logger.js';
import { scrubText, scrubValue } from './secrets.js';

const LEVELS: ReadonlySet<string | symbol> = new Set(['trace', 'debug', 'info', 'warn', 'error', 'fatal']);

/**
 * A logger that removes the given secret values from every argument before logging: an action
 * that logs a header it was given with a secret in it writes `[REDACTED]` instead (DESIGN §6.4).
 */
export function scrubbingLogger(log: Logger, secrets: readonly string[]): Logger {
  return new Proxy(log, {
    get(target, prop, receiver) {
      if (prop === 'child') {
        return (bindings: Record<string, unknown>, options?: object) =>
          scrubbingLogger(target.child(scrubValue(bindings, secrets), options as never), secrets);
      }
      const value: unknown = Reflect.get(target, prop, receiver);
      if (!LEVELS.has(prop) || typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const clean = args.map((a) => {
          if (typeof a === 'string') return scrubText(a, secrets);
          if (a instanceof Error)
            return {
              err: { type: a.name, message: scrubText(a.message, secrets), stack: scrubText(a.stack ?? '', secrets) },
            };
          return scrubValue(a, secrets);
        });
        return (value as (...a: unknown[]) => void).apply(target, clean);
      };
    },
  });
}
