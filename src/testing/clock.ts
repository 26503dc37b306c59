import { SagawayError } from '../core/errors.js';
import { parseDuration, type Duration } from '../core/units.js';

/**
 * A clock that tests move (issue 21): the clock of wait steps (due times of `for`, `until`
 * and `timeout`), of their pollers and of callback links' expiry. It stands still unless told,
 * so that a test says exactly when a 72 h timeout falls due; `startTestHost(config, { clock })`
 * and `sagaway run --advance` use it. Only the waits read it: event steps' timeouts, the saga's
 * own timeout and logs keep the real time.
 */
export class TestClock {
  private t: number;

  /** `start`: epoch ms, an ISO 8601 time or a Date; default the real now. */
  constructor(start: number | string | Date = Date.now()) {
    this.t = toEpoch(start);
  }

  now(): number {
    return this.t;
  }

  /** Move the clock forward by a duration (`72h`, `90s`, ms); returns the new time. */
  advance(by: Duration): number {
    const ms = parseDuration(by);
    if (ms === undefined) throw new SagawayError('VALIDATION_FAILED', `not a duration: ${String(by)}`);
    this.t += ms;
    return this.t;
  }

  /** Set the clock to a time (it may go back: a test's own business). */
  set(to: number | string | Date): void {
    this.t = toEpoch(to);
  }
}

/** A clock for tests, standing at `start` (default now). */
export function testClock(start?: number | string | Date): TestClock {
  return new TestClock(start);
}

function toEpoch(value: number | string | Date): number {
  const ms =
    value instanceof Date
      ? value.getTime()
      : typeof value === 'number'
        ? value
        : /^\d+$/.test(value)
          ? Number(value)
          : Date.parse(value);
  if (!Number.isFinite(ms)) throw new SagawayError('VALIDATION_FAILED', `not a time: ${String(value)}`);
  return ms;
}
