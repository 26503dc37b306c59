import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

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
  if (pretty) {
    return pino({ ...options, transport: { target: 'pino-pretty', options: { destination: fd, colorize: true } } });
  }
  return pino(options, pino.destination({ dest: fd, sync: false }));
}

/** A logger that drops everything (tests, benchmarks). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
