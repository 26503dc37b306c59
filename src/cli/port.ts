import { SagawayError } from '../core/errors.js';

/** A TCP port from an option or the environment; undefined when absent. */
export function parsePort(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new SagawayError('VALIDATION_FAILED', `invalid port "${value}"`);
  return n;
}

/** Resolve when the process is asked to stop (SIGINT or SIGTERM). */
export function untilStopped(onStop: (signal: string) => void): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      onStop(signal);
      resolve();
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
}
