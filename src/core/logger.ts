import { createRequire } from 'node:module';
import type { Logger, LoggerOptions } from 'pino';

export type { Logger };

/**
 * pino, loaded at the first logger made, not with this module (which most modules import for
 * the type): `sagaway validate` makes none (issue 23, start-up cost). pino ships CommonJS.
 */
const require = createRequire(import.meta.url);
let pinoFn: typeof import('pino').pino | undefined;
const pinoOf = () => (pinoFn ??= (require('pino') as typeof import('pino')).pino);

/** Header and field names whose values are never logged. */
const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'headers.cookie',
  'headers["x-api-key"]',
  'authorization',
  'password',
  'secret',
  'token',
];

/** Options for createLogger; `level` defaults to LOG_LEVEL or info, `pretty` to whether stderr/stdout is a TTY. */
export interface LoggerSettings {
  level?: string;
  pretty?: boolean;
  /** file descriptor to write to: 1 = stdout (default), 2 = stderr */
  fd?: 1 | 2;
}

/** JSON lines (pretty when the output is a terminal), with secrets and credentials redacted. */
export function createLogger(settings: LoggerSettings = {}): Logger {
  const fd = settings.fd ?? 1;
  const level = settings.level ?? process.env['LOG_LEVEL'] ?? 'info';
  const pretty = settings.pretty ?? (fd === 1 ? process.stdout.isTTY : process.stderr.isTTY) === true;
  const options: LoggerOptions = { level, redact: { paths: REDACT, censor: '[REDACTED]' }, base: { pid: process.pid } };
  const pino = pinoOf();
  if (pretty) {
    return pino({ ...options, transport: { target: 'pino-pretty', options: { destination: fd, colorize: true } } });
  }
  return pino(options, pino.destination({ dest: fd, sync: false }));
}

/** A logger that drops everything (tests, benchmarks). */
export function silentLogger(): Logger {
  return pinoOf()({ level: 'silent' });
}

/**
 * A silent logger made at its first use: what `sagaway validate` hands the handlers it builds
 * only to check them (they rarely log while being built), without loading pino for it.
 */
export function lazySilentLogger(): Logger {
  let real: Logger | undefined;
  return new Proxy({} as Logger, {
    get(_target, key) {
      real ??= silentLogger();
      const value: unknown = Reflect.get(real, key, real);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(real) : value;
    },
  });
}
